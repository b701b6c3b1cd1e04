#include "distflow/training/saver.h"

#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distflow/cc/const_op.h"
#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/io_ops.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_name_utils.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/training/variable.h"

namespace distflow {
namespace {

using ops::internal::BuildOp;

constexpr char kIndexFile[] = "checkpoint";
constexpr char kPrefixBase[] = "model.ckpt-";

// The prefix of the checkpoint of `global_step` in `dir`.
std::string PrefixOf(const std::string& dir, int64_t global_step) {
  return absl::StrCat(dir, "/", kPrefixBase, global_step);
}

// Where shard i of n saves before the merge (TensorFlow's ShardedFilename).
std::string TempShardPrefix(const std::string& prefix, size_t i, size_t n) {
  return absl::StrFormat("%s_temp/part-%05d-of-%05d", prefix, i, n);
}

// Shard i of n of a checkpoint written by distflow before checkpoints were
// TensorFlow's: a checkpoint of its own.
std::string OldShardPrefix(const std::string& prefix, size_t i, size_t n) {
  return absl::StrCat(prefix, ".shard-", i, "-of-", n);
}

// The task part of a device name ("" when the device is unset).
std::string TaskOf(const std::string& device) {
  ParsedDeviceName p;
  if (!device_name::Parse(device, &p) || !p.has_job) return "";
  return absl::StrCat("/job:", p.job, "/task:", p.has_task ? p.task : 0);
}

// Whether `path` names a checkpoint Save could have written into `dir`:
// "<dir>/model.ckpt-<step>" with 0 <= step, after normalising "." and "..".
bool IsCheckpointInDir(const std::string& dir, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path d = fs::path(dir).lexically_normal();
  const std::string parent = p.parent_path().string();
  std::string want = d.string();
  while (want.size() > 1 && want.back() == '/') want.pop_back();
  if (want == ".") want.clear();
  if (parent != want) return false;
  const std::string name = p.filename().string();
  return absl::StartsWith(name, kPrefixBase) && Saver::StepOfCheckpoint(name) >= 0;
}

// The checkpoints Save wrote into `dir` that are on disk, found by their file
// names, oldest first: `complete` when every file of one layout is there,
// `partial` otherwise. TensorFlow's layout: "model.ckpt-<step>.index" (written
// last, after the merge) and ".data-<k>-of-<n>" for every k < n; the layout
// of earlier distflow versions: ".shard-<i>-of-<n>.index" and its data file
// for every i < n.
struct CheckpointsOnDisk {
  std::vector<std::string> complete, partial;
};

CheckpointsOnDisk FindCheckpointsOnDisk(const std::string& dir) {
  struct Found {
    std::set<int64_t> data_counts;   // the n of every ".data-<k>-of-<n>"
    std::set<int64_t> shard_counts;  // the n of every ".shard-<i>-of-<n>"
    std::set<std::string> files;
  };
  std::map<int64_t, Found> by_step;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    absl::string_view name = file;
    if (!absl::ConsumePrefix(&name, kPrefixBase)) continue;
    const std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
    int64_t step;
    if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &step) || step < 0) continue;
    Found& found = by_step[step];
    found.files.insert(file);
    const std::vector<absl::string_view> k_of_n = absl::StrSplit(parts[1], "-of-");
    int64_t n;
    if (k_of_n.size() != 2 || !absl::SimpleAtoi(k_of_n[1], &n) || n < 1) continue;
    if (absl::StartsWith(parts[1], "data-")) found.data_counts.insert(n);
    if (absl::StartsWith(parts[1], "shard-")) found.shard_counts.insert(n);
  }
  CheckpointsOnDisk out;
  for (const auto& [step, found] : by_step) {
    const std::string base = absl::StrCat(kPrefixBase, step);
    auto has = [&found](const std::string& f) { return found.files.count(f) > 0; };
    // A count above the files found cannot be complete: skip it unchecked.
    const int64_t files = static_cast<int64_t>(found.files.size());
    bool complete = false;
    if (has(BundleIndexFilename(base))) {
      for (int64_t n : found.data_counts) {
        if (complete || n >= files) break;
        complete = true;
        for (int64_t k = 0; complete && k < n; ++k) {
          complete = has(BundleDataFilename(base, static_cast<int>(k), static_cast<int>(n)));
        }
      }
    }
    for (int64_t n : found.shard_counts) {
      if (complete || 2 * n > files) break;
      complete = true;
      for (int64_t i = 0; complete && i < n; ++i) {
        const std::string shard =
            OldShardPrefix(base, static_cast<size_t>(i), static_cast<size_t>(n));
        complete = has(BundleDataFilename(shard)) && has(BundleIndexFilename(shard));
      }
    }
    (complete ? out.complete : out.partial).push_back(absl::StrCat(dir, "/", base));
  }
  return out;
}

// The checkpoints "<dir>/checkpoint" lists, oldest first. When the file does
// not exist, the complete checkpoints on disk stand for it, so a lost state
// file neither restarts training from step 0 over them nor hides them from
// pruning; empty when there are none. A file that exists must be one Save wrote: only
// model_checkpoint_path / all_model_checkpoint_paths lines, each naming a
// checkpoint inside `dir`. Anything else is DataLoss naming the file, so a
// damaged index neither restarts training from step 0 nor lets Save prune
// checkpoints (or files elsewhere) it names.
absl::StatusOr<std::vector<std::string>> ReadIndex(const std::string& dir) {
  const std::string file = absl::StrCat(dir, "/", kIndexFile);
  std::vector<std::string> paths;
  absl::StatusOr<std::string> text = ReadFileToString(file);
  if (absl::IsNotFound(text.status())) return FindCheckpointsOnDisk(dir).complete;
  if (!text.ok()) return text.status();
  auto bad = [&file](auto... why) {
    return errors::DataLoss("checkpoint state file ", file, " is damaged: ", why...,
                            "; repair or remove it (no checkpoint was deleted)");
  };
  std::string latest;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const bool is_all = absl::ConsumePrefix(&line, "all_model_checkpoint_paths:");
    if (!is_all && !absl::ConsumePrefix(&line, "model_checkpoint_path:")) {
      return bad("line ", line_no,
                 " is neither model_checkpoint_path nor "
                 "all_model_checkpoint_paths");
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.size() < 2 || line.front() != '"' || line.back() != '"') {
      return bad("line ", line_no, " does not hold a quoted path");
    }
    const std::string path(line.substr(1, line.size() - 2));
    if (!IsCheckpointInDir(dir, path)) {
      return bad("line ", line_no, " names '", path, "', which is not a checkpoint ", "(",
                 kPrefixBase, "<step>) in ", dir);
    }
    if (is_all) {
      paths.push_back(path);
    } else {
      latest = path;
    }
  }
  if (paths.empty()) return bad("it lists no checkpoint");
  if (!latest.empty() && latest != paths.back()) {
    return bad("model_checkpoint_path '", latest,
               "' is not the last of all_model_checkpoint_paths");
  }
  return paths;
}

}  // namespace

Saver::Saver(const Scope& scope, std::vector<Variable> variables, int max_to_keep)
    : scope_(scope.NewSubScope("save")),
      variables_(std::move(variables)),
      max_to_keep_(std::max(1, max_to_keep)) {
  // One shard per task, in the order the tasks first appear.
  std::map<std::string, int> shard_of_task;
  for (size_t v = 0; v < variables_.size(); ++v) {
    const Node* n = variables_[v].handle.node();
    const std::string device = n == nullptr ? "" : n->requested_device();
    const std::string task = TaskOf(device);
    auto [it, inserted] = shard_of_task.try_emplace(task, static_cast<int>(shards_.size()));
    if (inserted) {
      shards_.emplace_back();
      shards_.back().device = device;
    }
    shards_[it->second].vars.push_back(static_cast<int>(v));
  }
  for (size_t s = 0; s < shards_.size(); ++s) {
    Shard& shard = shards_[s];
    const Scope sc = scope_.WithDevice(shard.device);
    std::vector<std::string> names;
    std::vector<DataType> dtypes;
    OutputList values, snapshot_values;
    for (int v : shard.vars) {
      const Variable& var = variables_[v];
      names.push_back(var.name);
      dtypes.push_back(var.dtype);
      Node* read = BuildOp(sc, "ReadVariableOp", {Input(var.handle)}, {{"dtype", var.dtype}});
      values.push_back(Output(read, 0));
      // The snapshot lives beside its variable; its initializer assigns the
      // value read, sharing the buffer (copy-on-write, see the header).
      const Scope at_var = scope_.NewSubScope("snapshot")
                               .WithDevice(shard.device)
                               .ColocateWith(Operation(var.handle.node()));
      const distflow::Variable snapshot(at_var.WithOpName(var.name), Output(read, 0));
      if (snapshot.handle().node() == nullptr) return;  // the error is in the scope
      take_snapshot_.push_back(snapshot.initializer());
      snapshot_values.push_back(snapshot.Read(at_var));
      release_snapshot_.push_back(
          Operation(BuildOp(at_var, "DestroyResourceOp", {Input(snapshot.handle())},
                            {{"ignore_lookup_error", true}})));
    }
    Tensor names_t(DT_STRING, TensorShape({static_cast<int64_t>(names.size())}));
    Tensor slices_t(DT_STRING, TensorShape({static_cast<int64_t>(names.size())}));
    for (size_t i = 0; i < names.size(); ++i) names_t.flat<std::string>()[i] = names[i];
    shard.prefix = ops::Placeholder(sc.WithOpName(absl::StrCat("prefix_", s)), DT_STRING);
    auto names_c = ops::Const(sc, names_t);
    auto slices_c = ops::Const(sc, slices_t);
    shard.save = ops::SaveV2(sc, shard.prefix, names_c, slices_c, values).operation;
    shard.save_snapshot =
        ops::SaveV2(sc, shard.prefix, names_c, slices_c, snapshot_values).operation;
    shard.restored = ops::RestoreV2(sc, shard.prefix, names_c, slices_c, dtypes).tensors;
  }
  std::vector<Operation> saves, snapshot_saves;
  for (const Shard& shard : shards_) {
    saves.push_back(shard.save);
    snapshot_saves.push_back(shard.save_snapshot);
  }
  const Scope merge_scope = scope_.WithDevice(shards_.empty() ? "" : shards_[0].device);
  merge_inputs_ = ops::Placeholder(merge_scope.WithOpName("shard_prefixes"), DT_STRING);
  merge_dest_ = ops::Placeholder(merge_scope.WithOpName("checkpoint_prefix"), DT_STRING);
  merge_ = ops::MergeV2Checkpoints(merge_scope.WithControlDependencies(saves), merge_inputs_,
                                   merge_dest_)
               .operation;
  merge_snapshot_ = ops::MergeV2Checkpoints(merge_scope.WithControlDependencies(snapshot_saves),
                                            merge_inputs_, merge_dest_)
                        .operation;
  for (size_t v = 0; v < variables_.size(); ++v) {
    const Node* n = variables_[v].handle.node();
    const Scope sc = scope_.WithDevice(n == nullptr ? "" : n->requested_device());
    auto value = ops::Placeholder(sc, variables_[v].dtype);
    assign_values_.push_back(value);
    assigns_.push_back(
        Operation(BuildOp(sc, "AssignVariableOp", {Input(variables_[v].handle), Input(value)},
                          {{"dtype", variables_[v].dtype}})));
  }
}

int64_t Saver::StepOfCheckpoint(const std::string& prefix) {
  const size_t at = prefix.rfind(kPrefixBase);
  int64_t step;
  if (at == std::string::npos ||
      !absl::SimpleAtoi(prefix.substr(at + sizeof(kPrefixBase) - 1), &step)) {
    return -1;
  }
  return step;
}

absl::StatusOr<std::string> Saver::WriteShards(const ClientSession& session, const Operation& merge,
                                               const std::string& dir, int64_t global_step) {
  DF_RETURN_IF_ERROR(scope_.status());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errors::Internal("cannot create checkpoint directory '", dir, "': ", ec.message());
  const std::string prefix = PrefixOf(dir, global_step);
  // Read first: a damaged index stops the save before any shard is written.
  DF_RETURN_IF_ERROR(ReadIndex(dir).status());
  ClientSession::FeedType feeds;
  Tensor parts(DT_STRING, TensorShape({static_cast<int64_t>(shards_.size())}));
  for (size_t s = 0; s < shards_.size(); ++s) {
    const std::string part = TempShardPrefix(prefix, s, shards_.size());
    feeds.emplace(shards_[s].prefix, Input::Initializer(part));
    parts.flat<std::string>()[s] = part;
  }
  feeds.emplace(merge_inputs_, Input::Initializer(parts));
  feeds.emplace(merge_dest_, Input::Initializer(prefix));
  std::vector<Tensor> unused;
  DF_RETURN_IF_ERROR(session.Run(feeds, {}, {merge}, &unused));
  return prefix;
}

absl::Status Saver::Commit(const std::string& dir, const std::string& prefix) {
  DF_ASSIGN_OR_RETURN(std::vector<std::string> paths, ReadIndex(dir));
  paths.erase(std::remove(paths.begin(), paths.end(), prefix), paths.end());
  paths.push_back(prefix);
  std::vector<std::string> dropped;
  while (static_cast<int>(paths.size()) > max_to_keep_) {
    dropped.push_back(paths.front());
    paths.erase(paths.begin());
  }
  std::string index = absl::StrCat("model_checkpoint_path: \"", prefix, "\"\n");
  for (const std::string& p : paths)
    absl::StrAppend(&index, "all_model_checkpoint_paths: \"", p, "\"\n");
  DF_RETURN_IF_ERROR(WriteStringToFileAtomic(absl::StrCat(dir, "/", kIndexFile), index));
  // Old checkpoints go only after the index stops naming them.
  std::error_code ec;
  for (const std::string& old : dropped) {
    const std::filesystem::path p(old);
    for (const auto& entry : std::filesystem::directory_iterator(p.parent_path(), ec)) {
      const std::string name = entry.path().filename().string();
      if (absl::StartsWith(name, p.filename().string() + ".") ||
          name == p.filename().string() + "_temp") {
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Saver::Save(const ClientSession& session, const std::string& dir,
                                        int64_t global_step) {
  DF_ASSIGN_OR_RETURN(std::string prefix, WriteShards(session, merge_, dir, global_step));
  DF_RETURN_IF_ERROR(Commit(dir, prefix));
  return prefix;
}

absl::Status Saver::Snapshot(const ClientSession& session) {
  DF_RETURN_IF_ERROR(scope_.status());
  return session.Run({}, {}, take_snapshot_, nullptr);
}

absl::StatusOr<std::string> Saver::WriteSnapshot(const ClientSession& session,
                                                 const std::string& dir, int64_t global_step) {
  const std::string prefix = PrefixOf(dir, global_step);
  DF_ASSIGN_OR_RETURN(std::vector<std::string> listed, ReadIndex(dir));
  if (std::find(listed.begin(), listed.end(), prefix) != listed.end()) {
    return errors::AlreadyExists("checkpoint '", prefix,
                                 "' is listed in the index already; it is kept as it is");
  }
  absl::StatusOr<std::string> written = WriteShards(session, merge_snapshot_, dir, global_step);
  // Best effort: a snapshot not released goes with the next Snapshot or
  // with its task (a failed write usually means a task is gone).
  session.Run({}, {}, release_snapshot_, nullptr).IgnoreError();
  return written;
}

absl::StatusOr<std::string> Saver::LatestCheckpoint(const std::string& dir) {
  DF_ASSIGN_OR_RETURN(std::vector<std::string> paths, ReadIndex(dir));
  if (!paths.empty()) return paths.back();
  const std::vector<std::string> partial = FindCheckpointsOnDisk(dir).partial;
  if (!partial.empty()) {
    // Starting afresh would save over them.
    return errors::DataLoss("no checkpoint state file ", dir, "/", kIndexFile,
                            " and only incomplete checkpoints (an index or data file missing): ",
                            absl::StrJoin(partial, ", "),
                            "; restore the missing files or move them away");
  }
  return errors::NotFound("no checkpoint listed in '", dir, "/", kIndexFile, "'");
}

absl::Status Saver::Restore(const ClientSession& session, const std::string& prefix) {
  DF_RETURN_IF_ERROR(scope_.status());
  // Step 1: read every shard. Each task reads its own variables from the
  // checkpoint, or from its own shard of a checkpoint of the old layout.
  const bool old_layout =
      !std::filesystem::exists(absl::StrCat(prefix, ".index")) &&
      std::filesystem::exists(absl::StrCat(OldShardPrefix(prefix, 0, shards_.size()), ".index"));
  ClientSession::FeedType feeds;
  std::vector<Output> fetches;
  for (size_t s = 0; s < shards_.size(); ++s) {
    feeds.emplace(
        shards_[s].prefix,
        Input::Initializer(old_layout ? OldShardPrefix(prefix, s, shards_.size()) : prefix));
    for (const Output& o : shards_[s].restored) fetches.push_back(o);
  }
  std::vector<Tensor> values;
  DF_RETURN_IF_ERROR(errors::Annotate(session.Run(feeds, fetches, &values),
                                      absl::StrCat("restoring '", prefix, "': ")));
  // Check every value before assigning any.
  std::vector<Tensor> by_var(variables_.size());
  size_t k = 0;
  for (const Shard& shard : shards_) {
    for (int v : shard.vars) by_var[v] = values[k++];
  }
  for (size_t v = 0; v < variables_.size(); ++v) {
    const Variable& var = variables_[v];
    if (by_var[v].dtype() != var.dtype) {
      return errors::InvalidArgument("checkpoint '", prefix, "' holds '", var.name, "' as ",
                                     DataTypeString(by_var[v].dtype()), " but the variable is ",
                                     DataTypeString(var.dtype));
    }
    if (by_var[v].shape() != var.shape) {
      return errors::InvalidArgument("checkpoint '", prefix, "' holds '", var.name, "' with shape ",
                                     by_var[v].shape().DebugString(),
                                     " but the variable has shape ", var.shape.DebugString());
    }
  }
  // Step 2: assign them all.
  ClientSession::FeedType assign_feeds;
  for (size_t v = 0; v < variables_.size(); ++v) {
    assign_feeds.emplace(assign_values_[v], Input::Initializer(by_var[v]));
  }
  std::vector<Tensor> unused;
  return session.Run(assign_feeds, {}, assigns_, &unused);
}

}  // namespace distflow
