# The `install` test: installs the build tree into a fresh prefix, builds
# examples/standalone against it twice — with find_package(distflow CONFIG)
# alone, and with one compiler command from `pkg-config --cflags --libs
# distflow` (the README's two routes) — runs both programs and checks what
# they print, and that only the API headers were installed.
#   cmake -DBUILD_DIR=build/release -DSOURCE_DIR=. -DWORK_DIR=/tmp/x [-DLAUNCHER=ccache]
#         -P tests/install_test.cmake
cmake_minimum_required(VERSION 3.25)
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_test.cmake: pass -D${v}=...")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix} ${build})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/standalone -B ${build} -G Ninja
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} ${launcher})
run(${CMAKE_COMMAND} --build ${build})
run(${build}/standalone)
set(want "y = 3 5 7\ndsum(x*x)/dx = 2 4 6\n")
if(NOT out STREQUAL want)
  message(FATAL_ERROR "standalone printed:\n${out}\nwanted:\n${want}")
endif()
foreach(f bin/distflow include/distflow/cc/client_session.h include/distflow/graph.pb.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# Internals stay out of the installed tree (cmake/distflow_public_headers.cmake).
foreach(f include/distflow/common_runtime/executor_state.h
    include/distflow/distributed_runtime/master_session.h)
  if(EXISTS ${prefix}/${f})
    message(FATAL_ERROR "installed, but internal: ${f}")
  endif()
endforeach()

# The pkg-config route.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
file(GLOB_RECURSE pc_file ${prefix}/*/distflow.pc)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run(${PKG_CONFIG} --cflags --libs distflow)
string(STRIP "${out}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(${LAUNCHER} ${CXX} -O1 ${SOURCE_DIR}/examples/standalone/main.cc -o ${WORK_DIR}/standalone_pc
  ${pc_flags})
run(${WORK_DIR}/standalone_pc)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "standalone (pkg-config) printed:\n${out}\nwanted:\n${want}")
endif()
message(STATUS "installed into ${prefix}; standalone built both ways and printed:\n${out}")
