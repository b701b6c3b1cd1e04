// Saver: checkpoints of resource variables, TensorFlow-style and in
// TensorFlow's format. Saving runs one SaveV2 per task that owns variables,
// on that task (a parameter server writes its own shard), so tensors never
// travel to the client; each writes "<prefix>_temp/part-0000i-of-0000n",
// and then MergeV2Checkpoints (on the first shard's task; the tasks share
// the checkpoint directory) makes them one checkpoint, the prefix
// "<dir>/model.ckpt-<step>" with one data file per shard, as TensorFlow's
// sharded Saver does. The text file "<dir>/checkpoint" lists the latest
// checkpoints (newest last, at most max_to_keep; older ones are deleted) and
// is replaced atomically after the merge, so a crash mid-save never leaves
// it pointing at a partial checkpoint. Checkpoints of earlier distflow
// versions (shard i a checkpoint of its own, "<prefix>.shard-<i>-of-<n>")
// still restore.
//
// Restoring is all or nothing: a first step reads every shard (RestoreV2
// checks names, dtypes and checksums), the values are checked against the
// variables' dtypes and shapes, and only then a second step assigns them.
// Any missing tensor, mismatch or corruption is reported by name and leaves
// every variable as it was. Use from one thread at a time.
#ifndef DISTFLOW_TRAINING_SAVER_H_
#define DISTFLOW_TRAINING_SAVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {

class Saver {
 public:
  // A variable to checkpoint: its name in the checkpoint, its handle (the
  // output of its VarHandleOp, whose device decides the shard) and its type.
  struct Variable {
    std::string name;
    Output handle;
    DataType dtype;
    TensorShape shape;
  };

  // Adds the save and restore ops to `scope`'s graph.
  Saver(const Scope& scope, std::vector<Variable> variables, int max_to_keep = 5);

  // Writes checkpoint "<dir>/model.ckpt-<global_step>" and updates the
  // index. Returns the checkpoint's prefix.
  absl::StatusOr<std::string> Save(const ClientSession& session, const std::string& dir,
                                   int64_t global_step);
  // Restores every variable from the checkpoint with `prefix`.
  absl::Status Restore(const ClientSession& session, const std::string& prefix);

  // The newest checkpoint prefix listed in "<dir>/checkpoint"; NotFound when
  // there is none.
  static absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);
  // The global step encoded in a prefix made by Save, or -1.
  static int64_t StepOfCheckpoint(const std::string& prefix);

 private:
  struct Shard {
    std::string device;
    std::vector<int> vars;  // indices into variables_
    Output prefix;          // string placeholder
    Operation save;
    OutputList restored;
  };

  Scope scope_;
  std::vector<Variable> variables_;
  std::vector<Shard> shards_;
  Output merge_inputs_;                // string vector placeholder: the shards' prefixes
  Output merge_dest_;                  // string placeholder: the checkpoint's prefix
  Operation merge_;                    // runs after every shard's save
  std::vector<Output> assign_values_;  // one placeholder per variable
  std::vector<Operation> assigns_;
  int max_to_keep_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_SAVER_H_
