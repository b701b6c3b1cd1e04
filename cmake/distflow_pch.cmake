# Precompiled headers (option DISTFLOW_PCH, on by default): most of a
# distflow translation unit's compile time is parsing the same headers —
# the framework's (Tensor, OpKernel, the generated protos, Eigen through
# them), Abseil's, and in tests gtest and gmock. Each layer above core and
# each test program instead loads them precompiled once:
#
# - Layers: one PCH of the framework headers, built with distflow_framework
#   and reused by every layer above it (they all may include framework/).
# - Tests: one PCH of gtest, gmock and the framework headers, built once
#   and reused by every test program.
#
# A PCH only saves parsing; every source still includes what it uses (the
# build without PCH, -DDISTFLOW_PCH=OFF, checks that). Measured on this
# project in docs/performance.md ("Build time").

set(DISTFLOW_LAYER_PCH_HEADERS
  <functional> <memory> <string> <vector>
  [["absl/status/statusor.h"]] [["absl/strings/str_cat.h"]]
  [["distflow/framework/op_kernel.h"]])

set(DISTFLOW_TEST_PCH_HEADERS
  <functional> <memory> <string> <vector>
  [["gmock/gmock.h"]] [["gtest/gtest.h"]]
  [["absl/status/statusor.h"]] [["absl/strings/str_cat.h"]]
  [["distflow/framework/tensor.h"]] [["distflow/graph.pb.h"]])

# GCC forgets that code inlined from a precompiled header came from a
# system header, so -Wmaybe-uninitialized and -Wuninitialized report false
# positives inside Eigen's and Abseil's headers (AVX-512 intrinsics, Abseil's
# InlinedVector) that a build without PCH never shows. Targets with a PCH
# leave those two off; the build without PCH (DISTFLOW_PCH=OFF) keeps them.
set(DISTFLOW_PCH_WARNING_OPTIONS -Wno-maybe-uninitialized -Wno-uninitialized)

# distflow_layer_pch(LAYER): LAYER compiles with the layers' PCH.
function(distflow_layer_pch layer)
  if(NOT DISTFLOW_PCH)
    return()
  endif()
  target_compile_options(distflow_${layer} PRIVATE ${DISTFLOW_PCH_WARNING_OPTIONS})
  if(layer STREQUAL "framework")
    target_precompile_headers(distflow_framework PRIVATE ${DISTFLOW_LAYER_PCH_HEADERS})
  else()
    target_precompile_headers(distflow_${layer} REUSE_FROM distflow_framework)
  endif()
endfunction()

# distflow_test_pch(TARGET): the test program TARGET compiles with the
# tests' PCH. It is built with distflow_test_pch_host (tests/), which has no
# compile definitions of its own: GCC uses a PCH only where every macro it
# was built with is defined alike, and test programs define their own
# (DISTFLOW_BINARY, DISTFLOW_SOURCE_DIR).
function(distflow_test_pch target)
  if(DISTFLOW_PCH)
    target_precompile_headers(${target} REUSE_FROM distflow_test_pch_host)
    target_compile_options(${target} PRIVATE ${DISTFLOW_PCH_WARNING_OPTIONS})
  endif()
endfunction()
