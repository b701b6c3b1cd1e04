// RecvTensorResponse bytes, split into gRPC slices at fuzzer-chosen points,
// decoded by the zero-copy decoder (rpc/grpc_tensor_coding.h). What decodes
// must re-encode and decode to the same tensor.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "fuzz_limits.h"
#include "grpcpp/support/slice.h"

namespace {

bool SameBytes(const distflow::Tensor& a, const distflow::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == distflow::DT_STRING) {
    auto x = a.flat<std::string>();
    auto y = b.flat<std::string>();
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  return a.TotalBytes() == b.TotalBytes() &&
         (a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  if (size < 1) return 0;
  // The first byte picks how many bytes go into each slice (0: one slice).
  const size_t chunk = data[0] == 0 ? size : data[0];
  std::vector<grpc::Slice> slices;
  for (size_t at = 1; at < size; at += chunk) {
    slices.emplace_back(data + at, std::min(chunk, size - at));
  }
  grpc::ByteBuffer buffer(slices.data(), slices.size());
  Tensor tensor;
  bool is_dead = false;
  int64_t micros = 0;
  if (!DecodeRecvTensorResponse(buffer, &tensor, &is_dead, &micros).ok() || is_dead) return 0;

  grpc::ByteBuffer again;
  EncodeRecvTensorResponse(tensor, false, micros, &again);
  Tensor back;
  bool back_dead = true;
  int64_t back_micros = 0;
  if (!DecodeRecvTensorResponse(again, &back, &back_dead, &back_micros).ok() || back_dead ||
      back_micros != micros || !SameBytes(tensor, back)) {
    std::abort();
  }
  return 0;
}
