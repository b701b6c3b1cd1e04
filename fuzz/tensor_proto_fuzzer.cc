// TensorProto bytes -> Tensor. A proto that decodes must survive a round
// trip through both writers with its dtype, shape and bytes unchanged.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "distflow/framework/tensor_proto.h"
#include "fuzz_limits.h"

namespace distflow {
namespace {

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DT_STRING) {
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

void CheckRoundTrip(const Tensor& t, void (*write)(const Tensor&, TensorProto*)) {
  TensorProto proto;
  write(t, &proto);
  Tensor back;
  if (!TensorFromProto(proto, &back).ok() || !SameTensor(t, back)) std::abort();
}

}  // namespace
}  // namespace distflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  Tensor t;
  if (!TensorFromProto(proto, &t).ok()) return 0;
  CheckRoundTrip(t, TensorToProto);
  CheckRoundTrip(t, TensorToProtoField);
  return 0;
}
