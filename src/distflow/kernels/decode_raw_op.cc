// DecodeRaw: output[..., j] is element j of the corresponding string's bytes
// read as out_type, in little-endian order unless little_endian is false.
// Every string must have the same length, a multiple of the element size.
#include <algorithm>
#include <cstring>
#include <string>

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

constexpr bool kHostIsLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

class DecodeRawOp : public OpKernel {
 public:
  explicit DecodeRawOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("out_type", &out_type_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("little_endian", &little_endian_));
    OP_REQUIRES(ctx, DataTypeIsSupported(out_type_) && DataTypeSize(out_type_) > 0,
                errors::InvalidArgument("node '", name(), "': DecodeRaw cannot decode into ",
                                        DataTypeString(out_type_)));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    auto strings = in.flat<std::string>();
    const int64_t elem = DataTypeSize(out_type_);
    const int64_t bytes = strings.empty() ? 0 : static_cast<int64_t>(strings[0].size());
    OP_REQUIRES(ctx, bytes % elem == 0,
                errors::InvalidArgument("node '", name(), "': input of ", bytes,
                                        " bytes is not a multiple of the ", elem, "-byte size of ",
                                        DataTypeString(out_type_)));
    for (size_t i = 1; i < strings.size(); ++i) {
      OP_REQUIRES(
          ctx, static_cast<int64_t>(strings[i].size()) == bytes,
          errors::InvalidArgument("node '", name(),
                                  "': DecodeRaw needs strings of one length; element 0 "
                                  "has ",
                                  bytes, " bytes but element ", i, " has ", strings[i].size()));
    }
    TensorShape shape = in.shape();
    OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(bytes / elem));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    char* dst = static_cast<char*>(out->raw_data());
    const bool swap = little_endian_ != kHostIsLittleEndian && elem > 1;
    for (size_t i = 0; i < strings.size(); ++i) {
      char* row = dst + static_cast<int64_t>(i) * bytes;
      if (out_type_ == DT_BOOL) {
        // Any nonzero byte is true; a bool may hold only 0 or 1.
        bool* b = reinterpret_cast<bool*>(row);
        for (int64_t j = 0; j < bytes; ++j) b[j] = strings[i][j] != 0;
        continue;
      }
      std::memcpy(row, strings[i].data(), static_cast<size_t>(bytes));
      if (swap) {
        for (int64_t j = 0; j < bytes; j += elem) std::reverse(row + j, row + j + elem);
      }
    }
  }

 private:
  DataType out_type_;
  bool little_endian_;
};

REGISTER_KERNEL_BUILDER(Name("DecodeRaw").Device(kDeviceCpu), DecodeRawOp);

}  // namespace
}  // namespace distflow
