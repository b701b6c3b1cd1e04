// Client wrappers for checkpoint I/O: SaveV2 writes named tensors under a
// file prefix, RestoreV2 reads them back, MergeV2Checkpoints joins the
// checkpoints of a sharded save (see kernels for the format and its checks). Each class builds one
// node when constructed; errors go to the scope.
#ifndef DISTFLOW_CC_OPS_IO_OPS_H_
#define DISTFLOW_CC_OPS_IO_OPS_H_

#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Op SaveV2: `tensor_names` and `shape_and_slices` are 1-D string tensors
// (slices empty strings: whole tensors).
class SaveV2 {
 public:
  SaveV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
         InputList tensors);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op RestoreV2: one output per name, of the given dtypes.
class RestoreV2 {
 public:
  RestoreV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
            const std::vector<DataType>& dtypes);
  Operation operation;
  OutputList tensors;
};

// Op MergeV2Checkpoints: `checkpoint_prefixes` a 1-D string tensor,
// `destination_prefix` a string scalar; the directories of the inputs are
// removed when the merge leaves them empty.
class MergeV2Checkpoints {
 public:
  MergeV2Checkpoints(const Scope& scope, Input checkpoint_prefixes, Input destination_prefix);
  operator Operation() const { return operation; }
  Operation operation;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_IO_OPS_H_
