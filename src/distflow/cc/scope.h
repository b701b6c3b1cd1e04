// Scope: where client code builds ops. A root scope owns a Graph, the
// ShapeRefiner that infers the shape of every node added through it, and a
// status. Derived scopes (sub-scopes, WithOpName, WithDevice,
// WithControlDependencies) share all three and differ only in how the next op
// is named and decorated:
//  - names are unique per graph: the first op built from default name "Add"
//    in a scope is "Add", the next "Add_1"; sub-scope "outer" then "inner"
//    prefixes names with "outer/inner/"; WithOpName("x") names the next op
//    "x" (or "x_1" if taken);
//  - the status records the FIRST construction error (unknown op, bad dtype,
//    bad shape, bad constant); once it is set, building ops through any scope
//    sharing it does nothing and every op wrapper yields null Outputs.
// Copying a Scope is cheap. A Scope and everything derived from it must be
// used from one thread at a time.
#ifndef DISTFLOW_CC_SCOPE_H_
#define DISTFLOW_CC_SCOPE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/cc/ops.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"
#include "distflow/graph/node_builder.h"
#include "distflow/graph/shape_refiner.h"

namespace distflow {

class Scope {
 public:
  // A scope with a new empty graph, no name prefix and an OK status.
  static Scope NewRootScope();

  // A scope whose ops are named "<this prefix>/<child>/op". The child name
  // is made unique among this scope's names ("child", "child_1", ...); an
  // empty name gives a scope with this one's prefix.
  Scope NewSubScope(absl::string_view child_scope_name) const;
  // A scope whose ops are named "<prefix>/op", with a name table of its own
  // (the first "Add" in it is "<prefix>/Add"). For clients that keep their
  // own table of the graph's names (the Python package): REQUIRES that
  // nothing else names ops under `prefix`.
  Scope WithNamePrefix(absl::string_view prefix) const;
  // A scope whose next op is named `fragments...` concatenated (made unique
  // if already taken) instead of its default name.
  template <typename... Ty>
  Scope WithOpName(const Ty&... fragments) const {
    return WithOpNameImpl(absl::StrCat(fragments...));
  }
  // Ops built in the returned scope run after `control_deps` (added to the
  // control dependencies this scope already has).
  Scope WithControlDependencies(absl::Span<const Operation> control_deps) const;
  Scope WithControlDependencies(const Output& control_dep) const;
  // Drops every control dependency.
  Scope WithNoControlDependencies() const;
  // Ops built in the returned scope request `device` (possibly partial, e.g.
  // "/job:ps/task:0"); a malformed name fails when the op is built. Replaces
  // any device function.
  Scope WithDevice(absl::string_view device) const;
  // Chooses the device an op requests from its type ("VarHandleOp",
  // "MatMul", ...); "" requests none.
  using DeviceFunction = std::function<std::string(absl::string_view op_type)>;
  // Ops built in the returned scope request `fn(op type)`, except ops built
  // under ColocateWith, which request the device of the op they are
  // colocated with (colocation wins, as in TensorFlow). Replaces the device
  // set by WithDevice; a later WithDevice replaces the function.
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // Ops built in the returned scope are placed with `op` (the "_class" attr
  // "loc:@<op's name>") and request the device `op` requested, whatever
  // device or device function the scope has (colocation wins, as in
  // TensorFlow).
  Scope ColocateWith(const Operation& op) const;
  Scope ColocateWith(const Output& out) const { return ColocateWith(out.op()); }
  Scope ClearColocation() const;

  // The name the next op with `default_name` gets in this scope; reserves it.
  std::string GetUniqueNameForOp(absl::string_view default_name) const;

  // Records `s` unless an error is already recorded (the first error wins).
  void UpdateStatus(const absl::Status& s) const;
  // Returns the recorded error and clears it, for a client that reports
  // every construction error itself and goes on building (the Python
  // package raises it as an exception).
  absl::Status TakeStatus() const;
  bool ok() const { return state_->status.ok(); }
  const absl::Status& status() const { return state_->status; }

  // Adds this scope's control dependencies, device and colocation to
  // `builder`.
  void UpdateBuilder(NodeBuilder* builder) const;
  // Infers `node`'s output shapes; on failure returns InvalidArgument naming
  // the node. Ops built through the wrappers are inferred already.
  absl::Status DoShapeInference(Node* node) const;

  Graph* graph() const { return &state_->graph; }
  ShapeRefiner* refiner() const { return &state_->refiner; }
  // The shared graph, kept alive as long as the returned pointer.
  std::shared_ptr<Graph> graph_as_shared_ptr() const;
  // Writes the graph; returns the recorded error instead when there is one.
  absl::Status ToGraphDef(GraphDef* graph_def) const;

  const std::vector<Operation>& control_deps() const { return control_deps_; }
  const std::string& device() const { return device_; }
  // The prefix of op names ("outer/inner"), empty at the root.
  const std::string& name_prefix() const { return prefix_; }

 private:
  struct SharedState {
    Graph graph;
    ShapeRefiner refiner;
    absl::Status status;
  };
  // Counters of names used under one prefix: name -> last suffix given.
  using NameMap = absl::flat_hash_map<std::string, int>;

  Scope() = default;
  Scope WithOpNameImpl(std::string op_name) const;
  // A name not yet used in this scope's name map: `base`, `base_1`, ...
  std::string UniqueName(absl::string_view base) const;

  std::shared_ptr<SharedState> state_;
  std::shared_ptr<NameMap> names_;
  std::string prefix_;
  std::string op_name_;
  std::string device_;
  std::shared_ptr<const DeviceFunction> device_function_;
  std::string colocation_;
  // The requested device of the op ColocateWith named.
  std::string colocation_device_;
  std::vector<Operation> control_deps_;
};

}  // namespace distflow

#endif  // DISTFLOW_CC_SCOPE_H_
