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
// every variable as it was.
//
// Saving off the training path (TensorFlow's async checkpointing) takes
// three calls:
//  1. Snapshot: one step that assigns every variable's value to a hidden
//     snapshot variable beside it, on its own device, and returns. Nothing
//     is copied then: the snapshot shares the value's buffer, and the
//     kernels that update variables in place (ResourceApply*, AssignAdd/Sub,
//     ResourceScatterAdd) copy a shared buffer before writing
//     (PrepareToUpdate, kernels/var.h), so the snapshot keeps the values of
//     the moment it was taken whatever runs afterwards: each variable's first
//     update after a snapshot pays for one copy of it, on its ps. Variables
//     updated concurrently with the Snapshot step are caught before or after
//     each update, as a synchronous save reading them would be.
//  2. WriteSnapshot: SaveV2 from the snapshots on every task, then the
//     merge, as Save does; then the snapshots are released. The index is
//     not touched: the checkpoint is not the latest yet (unless the
//     directory has no index at all: then every complete checkpoint on disk
//     stands for it, see LatestCheckpoint).
//  3. Commit: lists the written checkpoint in the index as Save does.
// Memory: while a snapshot is held (from Snapshot to the end of
// WriteSnapshot) every task keeps one more copy of its variables, the ones
// training has updated since. A write that fails (a task died or restarted:
// its snapshot is gone, and its SaveV2 fails) leaves the index as it was.
// The release is best effort: a snapshot it misses is replaced by the next
// Snapshot or goes with its task.
//
// Thread rules: Save, Restore, Snapshot and Commit from one thread at a
// time. WriteSnapshot may run on another thread while that thread goes on
// with other steps of the session (training), but it must not overlap
// another Snapshot, WriteSnapshot, Save or Restore of this Saver: the caller
// waits for the write first (or gives it up and does not Commit it).
#ifndef DISTFLOW_TRAINING_SAVER_H_
#define DISTFLOW_TRAINING_SAVER_H_

#include <cstdint>
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

  // Phase 1 of a background save: holds the current value of every variable
  // in its snapshot (replacing an earlier snapshot not written).
  absl::Status Snapshot(const ClientSession& session);
  // Phase 2: writes the snapshot as checkpoint "<dir>/model.ckpt-<global_step>"
  // (all files, index untouched) and releases it. Returns the prefix, for
  // Commit. AlreadyExists when the index lists that prefix already: a listed
  // checkpoint is never written over in the background. REQUIRES: Snapshot
  // ran since the previous WriteSnapshot.
  absl::StatusOr<std::string> WriteSnapshot(const ClientSession& session, const std::string& dir,
                                            int64_t global_step);
  // Phase 3: makes the checkpoint WriteSnapshot wrote at `prefix` the latest
  // in "<dir>/checkpoint", dropping the oldest beyond max_to_keep.
  absl::Status Commit(const std::string& dir, const std::string& prefix);

  // The newest checkpoint prefix listed in "<dir>/checkpoint" or, when that
  // file does not exist, the newest complete checkpoint on disk; NotFound
  // when there is none.
  static absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);
  // The global step encoded in a prefix made by Save, or -1.
  static int64_t StepOfCheckpoint(const std::string& prefix);

 private:
  struct Shard {
    std::string device;
    std::vector<int> vars;    // indices into variables_
    Output prefix;            // string placeholder
    Operation save;           // SaveV2 of the variables
    Operation save_snapshot;  // SaveV2 of their snapshots
    OutputList restored;
  };

  // Checks that the index reads, writes every shard (their SaveV2 ops run
  // before `merge`) and merges them into "<dir>/model.ckpt-<global_step>";
  // returns that prefix.
  absl::StatusOr<std::string> WriteShards(const ClientSession& session, const Operation& merge,
                                          const std::string& dir, int64_t global_step);

  Scope scope_;
  std::vector<Variable> variables_;
  std::vector<Shard> shards_;
  Output merge_inputs_;                      // string vector placeholder: the shards' prefixes
  Output merge_dest_;                        // string placeholder: the checkpoint's prefix
  Operation merge_;                          // runs after every shard's save
  Operation merge_snapshot_;                 // runs after every shard's save_snapshot
  std::vector<Operation> take_snapshot_;     // one AssignVariableOp per variable
  std::vector<Operation> release_snapshot_;  // one DestroyResourceOp per variable
  std::vector<Output> assign_values_;        // one placeholder per variable
  std::vector<Operation> assigns_;
  int max_to_keep_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_SAVER_H_
