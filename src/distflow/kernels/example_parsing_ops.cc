// Kernels for ParseExample and ParseExampleV2 (ops/parsing_ops.cc): each
// reads its keys and defaults into an ExampleParserConfig and hands the batch
// to ParseExamples (example_parser.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/example_parser.h"

namespace distflow {
namespace {

// The attrs both ops share: dense shapes and dtypes, sparse dtypes.
struct ParseAttrs {
  DataTypeVector dense_types;
  std::vector<PartialTensorShape> dense_shapes;
  DataTypeVector sparse_types;

  absl::Status Read(OpKernelConstruction* ctx) {
    DF_RETURN_IF_ERROR(ctx->GetAttr("Tdense", &dense_types));
    DF_RETURN_IF_ERROR(ctx->GetAttr("dense_shapes", &dense_shapes));
    DF_RETURN_IF_ERROR(ctx->GetAttr("sparse_types", &sparse_types));
    if (dense_shapes.size() != dense_types.size()) {
      return errors::InvalidArgument("dense_shapes has ", dense_shapes.size(),
                                     " shapes but Tdense ", dense_types.size(), " types");
    }
    return absl::OkStatus();
  }
};

// The string keys of `t`, which must hold `expected` of them.
absl::StatusOr<std::vector<std::string>> Keys(const Tensor& t, size_t expected,
                                              absl::string_view what) {
  if (t.dims() > 1 || static_cast<size_t>(t.NumElements()) != expected) {
    return errors::InvalidArgument(what, " must be a vector of ", expected, " keys, got shape ",
                                   t.shape().DebugString());
  }
  return std::vector<std::string>(t.flat<std::string>().begin(), t.flat<std::string>().end());
}

// Parses the batch (input 0, names input 1) as `config` says and outputs
// the tensors in the ops' order: sparse indices, values and shapes, dense
// values, then (V2) ragged values and row splits.
void ParseAndOutput(OpKernelContext* ctx, const absl::StatusOr<ExampleParserConfig>& config) {
  OP_REQUIRES_OK(ctx, config.status());
  auto parsed = ParseExamples(*config, ctx->input(0), ctx->input(1));
  OP_REQUIRES_OK(ctx, parsed.status());
  int i = 0;
  for (auto* list : {&parsed->sparse_indices, &parsed->sparse_values, &parsed->sparse_shapes,
                     &parsed->dense_values, &parsed->ragged_values, &parsed->ragged_splits}) {
    for (Tensor& t : *list) ctx->set_output(i++, std::move(t));
  }
}

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(attrs_.Read(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->input(0).dims() == 1,
                errors::InvalidArgument("ParseExample's serialized must be a vector, got shape ",
                                        ctx->input(0).shape().DebugString()));
    ParseAndOutput(ctx, Config(ctx));
  }

 private:
  // Inputs: serialized, names, Nsparse sparse keys, Ndense dense keys, Ndense
  // defaults; each key a scalar.
  absl::StatusOr<ExampleParserConfig> Config(OpKernelContext* ctx) const {
    const int num_sparse = static_cast<int>(attrs_.sparse_types.size());
    const int num_dense = static_cast<int>(attrs_.dense_types.size());
    ExampleParserConfig config;
    for (int i = 0; i < num_sparse; ++i) {
      DF_ASSIGN_OR_RETURN(auto key, Keys(ctx->input(2 + i), 1, "a sparse key"));
      config.sparse.push_back({key[0], attrs_.sparse_types[i]});
    }
    for (int i = 0; i < num_dense; ++i) {
      DF_ASSIGN_OR_RETURN(auto key, Keys(ctx->input(2 + num_sparse + i), 1, "a dense key"));
      config.dense.push_back({key[0], attrs_.dense_types[i], attrs_.dense_shapes[i],
                              ctx->input(2 + num_sparse + num_dense + i)});
    }
    return config;
  }

  ParseAttrs attrs_;
};

REGISTER_KERNEL_BUILDER(Name("ParseExample").Device(kDeviceCpu), ParseExampleOp);

class ParseExampleV2Op : public OpKernel {
 public:
  explicit ParseExampleV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(attrs_.Read(ctx));
    ctx->SetStatus(ctx->GetAttr("ragged_value_types", &ragged_types_));
    ctx->SetStatus(ctx->GetAttr("ragged_split_types", &split_types_));
    if (ragged_types_.size() != split_types_.size()) {
      ctx->SetStatus(errors::InvalidArgument("ragged_value_types has ", ragged_types_.size(),
                                             " types but ragged_split_types ",
                                             split_types_.size()));
    }
  }

  void Compute(OpKernelContext* ctx) override { ParseAndOutput(ctx, Config(ctx)); }

 private:
  // Inputs: serialized, names, then the sparse, dense and ragged keys (each
  // a vector), then one default per dense key.
  absl::StatusOr<ExampleParserConfig> Config(OpKernelContext* ctx) const {
    DF_ASSIGN_OR_RETURN(auto sparse_keys,
                        Keys(ctx->input(2), attrs_.sparse_types.size(), "sparse_keys"));
    DF_ASSIGN_OR_RETURN(auto dense_keys,
                        Keys(ctx->input(3), attrs_.dense_types.size(), "dense_keys"));
    DF_ASSIGN_OR_RETURN(auto ragged_keys, Keys(ctx->input(4), ragged_types_.size(), "ragged_keys"));
    ExampleParserConfig config;
    for (size_t i = 0; i < sparse_keys.size(); ++i) {
      config.sparse.push_back({sparse_keys[i], attrs_.sparse_types[i]});
    }
    for (size_t i = 0; i < dense_keys.size(); ++i) {
      config.dense.push_back({dense_keys[i], attrs_.dense_types[i], attrs_.dense_shapes[i],
                              ctx->input(5 + static_cast<int>(i))});
    }
    for (size_t i = 0; i < ragged_keys.size(); ++i) {
      config.ragged.push_back({ragged_keys[i], ragged_types_[i], split_types_[i]});
    }
    return config;
  }

  ParseAttrs attrs_;
  DataTypeVector ragged_types_;
  DataTypeVector split_types_;
};

REGISTER_KERNEL_BUILDER(Name("ParseExampleV2").Device(kDeviceCpu), ParseExampleV2Op);

}  // namespace
}  // namespace distflow
