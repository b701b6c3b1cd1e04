#include "graph.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "attrs.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph_import.h"
#include "distflow/graph/node_builder.h"
#include "google/protobuf/text_format.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

NodeBuilder::NodeOut NodeOutFromPython(const PyGraph& g, py::handle pair) {
  auto [id, index] = pair.cast<std::pair<int, int>>();
  return NodeBuilder::NodeOut(g.NodeById(id), index);
}

}  // namespace

PyGraph::PyGraph() : root_(Scope::NewRootScope()) {}

Node* PyGraph::NodeById(int id) const {
  Node* n = graph()->FindNodeId(id);
  if (n == nullptr || !n->IsOp()) throw py::value_error(absl::StrCat("no node with id ", id));
  return n;
}

Output PyGraph::OutputOf(int id, int index) const {
  Node* n = NodeById(id);
  if (index < 0 || index >= n->num_outputs()) {
    throw py::value_error(absl::StrCat("node '", n->name(), "' has no output ", index));
  }
  return Output(n, index);
}

const Variable& PyGraph::VariableById(int handle_id) const {
  auto it = variables_.find(handle_id);
  if (it == variables_.end()) {
    throw py::value_error(
        absl::StrCat("node '", NodeById(handle_id)->name(), "' is not a variable's handle"));
  }
  return it->second;
}

void PyGraph::ThrowIfBuilderFailed() const {
  if (!root_.ok()) ThrowIfError(root_.TakeStatus());
}

void PyGraph::ReserveName(absl::string_view name) {
  const std::string top(name.substr(0, name.find('/')));
  if (reserved_.insert(top).second) root_.GetUniqueNameForOp(top);
}

Scope PyGraph::BuilderScope(const std::string& prefix, const std::string& device,
                            const std::vector<int>& control_ids) {
  ReserveName(prefix);
  return Decorate(root_.WithNamePrefix(prefix), device, control_ids);
}

Scope PyGraph::NamedScope(const std::string& name, const std::string& device,
                          const std::vector<int>& control_ids) {
  ReserveName(name);
  // A name table of its own: Python made `name` unique, but the root table
  // may hold it already (reserved for ops Python built under "name/...").
  return Decorate(root_.WithNamePrefix("").WithOpName(name), device, control_ids);
}

Scope PyGraph::VariableScope(const std::string& name, const std::string& device,
                             const std::vector<int>& control_ids) {
  if (!variable_placement_) return NamedScope(name, device, control_ids);
  ReserveName(name);
  // The strategy's device function places the variable.
  return Decorate(variable_placement_->WithNamePrefix("").WithOpName(name), "", control_ids);
}

Scope PyGraph::Decorate(Scope scope, const std::string& device,
                        const std::vector<int>& control_ids) const {
  if (!device.empty()) scope = scope.WithDevice(device);
  std::vector<Operation> deps;
  for (int id : control_ids) deps.emplace_back(NodeById(id));
  if (!deps.empty()) scope = scope.WithControlDependencies(deps);
  return scope;
}

int PyGraph::AddOp(const std::string& op_type, const std::string& name, const py::list& inputs,
                   const py::dict& attrs, const std::string& device,
                   const std::vector<int>& control_ids) {
  const OpDef* op_def = nullptr;
  ThrowIfError(OpRegistry::Global()->LookUpOpDef(op_type, &op_def));
  NodeBuilder builder(name, op_type);
  for (py::handle arg : inputs) {
    if (py::isinstance<py::list>(arg)) {
      std::vector<NodeBuilder::NodeOut> list;
      for (py::handle t : arg) list.push_back(NodeOutFromPython(*this, t));
      builder.Input(absl::Span<const NodeBuilder::NodeOut>(list));
    } else {
      builder.Input(NodeOutFromPython(*this, arg));
    }
  }
  for (auto [key, value] : attrs) {
    const std::string attr_name = key.cast<std::string>();
    const OpDef::AttrDef* attr_def = nullptr;
    for (const OpDef::AttrDef& a : op_def->attr()) {
      if (a.name() == attr_name) attr_def = &a;
    }
    if (attr_def == nullptr) {
      ThrowIfError(errors::InvalidArgument("op ", op_type, " has no attr '", attr_name, "' (node '",
                                           name, "')"));
    }
    AttrValue attr;
    absl::Status s = AttrValueFromPython(attr_name, attr_def->type(), value, &attr);
    if (!s.ok()) ThrowIfError(errors::Annotate(s, absl::StrCat("node '", name, "': ")));
    builder.Attr(attr_name, attr);
  }
  for (int id : control_ids) builder.ControlInput(NodeById(id));
  if (!device.empty()) builder.Device(device);
  Node* node = nullptr;
  ThrowIfError(builder.Finalize(graph(), &node));
  absl::Status inferred = root_.DoShapeInference(node);
  if (!inferred.ok()) {
    graph()->RemoveNode(node);
    ThrowIfError(inferred);
  }
  ReserveName(name);
  return node->id();
}

std::vector<int> PyGraph::NodesSince(int first_id) const {
  std::vector<int> ids;
  for (int id = first_id; id < graph()->num_node_ids(); ++id) {
    Node* n = graph()->FindNodeId(id);
    if (n != nullptr && n->IsOp()) ids.push_back(id);
  }
  return ids;
}

void RegisterGraph(py::module_& m) {
  py::class_<PyGraph, std::shared_ptr<PyGraph>>(m, "Graph")
      .def(py::init<>())
      .def("add_op", &PyGraph::AddOp, py::arg("op_type"), py::arg("name"), py::arg("inputs"),
           py::arg("attrs"), py::arg("device"), py::arg("control_inputs"))
      .def("nodes_since", &PyGraph::NodesSince)
      .def_property_readonly("next_id", &PyGraph::next_id)
      .def("name", [](const PyGraph& g, int id) { return g.NodeById(id)->name(); })
      .def("type", [](const PyGraph& g, int id) { return g.NodeById(id)->type_string(); })
      .def("device", [](const PyGraph& g, int id) { return g.NodeById(id)->requested_device(); })
      .def("output_types",
           [](const PyGraph& g, int id) {
             std::vector<int> types;
             for (DataType t : g.NodeById(id)->output_types()) types.push_back(t);
             return types;
           })
      .def("input_types",
           [](const PyGraph& g, int id) {
             std::vector<int> types;
             for (DataType t : g.NodeById(id)->input_types()) types.push_back(t);
             return types;
           })
      .def("output_shape",
           [](const PyGraph& g, int id, int index) -> py::object {
             const Output out = g.OutputOf(id, index);
             const PartialTensorShape shape = g.root().refiner()->OutputShape(out.node(), index);
             if (shape.unknown_rank()) return py::none();
             py::list dims;
             for (int64_t d : shape.dim_sizes()) {
               dims.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
             }
             return dims;
           })
      .def("inputs",
           [](const PyGraph& g, int id) {
             Node* n = g.NodeById(id);
             std::vector<std::pair<int, int>> ins(n->num_inputs(), {-1, 0});
             for (const Edge* e : n->in_edges()) {
               if (!e->IsControlEdge()) ins[e->dst_input()] = {e->src()->id(), e->src_output()};
             }
             return ins;
           })
      .def("control_inputs",
           [](const PyGraph& g, int id) {
             std::vector<int> ids;
             for (const Edge* e : g.NodeById(id)->in_edges()) {
               if (e->IsControlEdge() && e->src()->IsOp()) ids.push_back(e->src()->id());
             }
             return ids;
           })
      .def("consumers",
           [](const PyGraph& g, int id, int index) {
             std::vector<int> ids;
             for (const Edge* e : g.OutputOf(id, index).node()->out_edges()) {
               if (e->src_output() == index && e->dst()->IsOp()) ids.push_back(e->dst()->id());
             }
             return ids;
           })
      .def("attr",
           [](const PyGraph& g, int id, const std::string& name) -> py::object {
             const Node* n = g.NodeById(id);
             auto it = n->def().attr().find(name);
             if (it == n->def().attr().end()) {
               throw py::value_error(
                   absl::StrCat("node '", n->name(), "' has no attr '", name, "'"));
             }
             return AttrValueToPython(it->second);
           })
      .def("node_def", [](const PyGraph& g,
                          int id) { return py::bytes(g.NodeById(id)->def().SerializeAsString()); })
      .def("node_def_text",
           [](const PyGraph& g, int id) { return g.NodeById(id)->def().DebugString(); })
      .def("graph_def",
           [](const PyGraph& g) {
             GraphDef def;
             g.graph()->ToGraphDef(&def);
             return py::bytes(def.SerializeAsString());
           })
      .def("node_ids", [](const PyGraph& g) { return g.NodesSince(0); })
      .def("graph_def_since",
           [](const PyGraph& g, int first_id) {
             // ToGraphDef writes op nodes in id order.
             GraphDef all;
             g.graph()->ToGraphDef(&all);
             GraphDef delta;
             *delta.mutable_versions() = all.versions();
             *delta.mutable_library() = all.library();
             const std::vector<Node*> nodes = g.graph()->op_nodes();
             for (size_t i = 0; i < nodes.size(); ++i) {
               if (nodes[i]->id() >= first_id) *delta.add_node() = all.node(static_cast<int>(i));
             }
             return py::bytes(delta.SerializeAsString());
           })
      .def("import_graph_def", [](PyGraph& g, const py::bytes& serialized,
                                  const std::string& prefix, const py::dict& input_map) {
        GraphDef def;
        if (!def.ParseFromString(std::string(serialized))) {
          ThrowIfError(errors::InvalidArgument("not a serialized GraphDef"));
        }
        ImportGraphDefOptions options;
        options.prefix = prefix;
        for (auto [key, value] : input_map) {
          options.input_map[key.cast<std::string>()] = NodeOutFromPython(g, value);
        }
        std::vector<Node*> added;
        ThrowIfError(ImportGraphDef(options, def, g.graph(), g.root().refiner(), &added));
        std::vector<int> ids;
        for (Node* n : added) {
          g.ReserveName(n->name());
          ids.push_back(n->id());
        }
        return ids;
      });
  m.def("graph_def_from_text", [](const std::string& text) {
    GraphDef def;
    if (!google::protobuf::TextFormat::ParseFromString(text, &def)) {
      ThrowIfError(errors::InvalidArgument("not a GraphDef in text format"));
    }
    return py::bytes(def.SerializeAsString());
  });
  m.def("graph_def_to_text", [](const py::bytes& serialized) {
    GraphDef def;
    if (!def.ParseFromString(std::string(serialized))) {
      ThrowIfError(errors::InvalidArgument("not a serialized GraphDef"));
    }
    std::string text;
    google::protobuf::TextFormat::PrintToString(def, &text);
    return text;
  });
  m.def("graph_def_nodes", [](const py::bytes& serialized) {
    GraphDef def;
    if (!def.ParseFromString(std::string(serialized))) {
      ThrowIfError(errors::InvalidArgument("not a serialized GraphDef"));
    }
    py::list nodes;
    for (const NodeDef& n : def.node()) {
      std::vector<std::string> inputs(n.input().begin(), n.input().end());
      nodes.append(py::make_tuple(n.name(), n.op(), inputs, n.device()));
    }
    return nodes;
  });
}

}  // namespace python
}  // namespace distflow
