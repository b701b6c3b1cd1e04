// The base of every dataset op's kernel: reads the op's output_types and
// output_shapes attrs (when it has them), calls MakeDataset and outputs the
// dataset as a DT_VARIANT scalar. Also the input helpers the dataset kernels
// share, each failing with InvalidArgument naming the node and the input.
// Kernels are stateless between steps unless they say otherwise; Compute
// may run concurrently.
#ifndef DISTFLOW_DATA_DATASET_OP_KERNEL_H_
#define DISTFLOW_DATA_DATASET_OP_KERNEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/data/dataset.h"
#include "distflow/framework/op_kernel.h"

namespace distflow {

class DatasetOpKernel : public OpKernel {
 public:
  explicit DatasetOpKernel(OpKernelConstruction* ctx);
  void Compute(OpKernelContext* ctx) final;

 protected:
  virtual absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) = 0;

  // The attrs (empty when the op has none).
  const DataTypeVector& output_types() const { return output_types_; }
  const std::vector<PartialTensorShape>& output_shapes() const { return output_shapes_; }

  // The dataset in variant input `index`.
  absl::StatusOr<DatasetPtr> DatasetInput(OpKernelContext* ctx, int index) const;
  // The int64 scalar input `index`.
  absl::StatusOr<int64_t> Int64Input(OpKernelContext* ctx, int index) const;
  // InvalidArgument unless `input` yields exactly the output_types attr and
  // shapes compatible with the output_shapes attr: for the ops that pass
  // elements through unchanged (Repeat, Take, Skip, Shuffle, Prefetch).
  absl::Status CheckSameStructure(const DatasetBase& input) const;
  // "input 'NAME' of node 'N'", for messages.
  std::string InputName(int index) const;

 private:
  DataTypeVector output_types_;
  std::vector<PartialTensorShape> output_shapes_;
  std::vector<std::string> input_names_;
};

}  // namespace distflow

#endif  // DISTFLOW_DATA_DATASET_OP_KERNEL_H_
