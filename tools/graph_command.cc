#include "graph_command.h"

#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph_io.h"
#include "distflow/graph/tensor_id.h"

namespace distflow {
namespace {

// "float32 [?,784]" from a placeholder's dtype and shape attrs.
std::string PlaceholderType(const NodeDef& n) {
  DataType dtype = DT_INVALID;
  PartialTensorShape shape;
  const bool has_dtype = GetNodeAttr(AttrSlice(n), "dtype", &dtype).ok();
  const bool has_shape = GetNodeAttr(AttrSlice(n), "shape", &shape).ok();
  return absl::StrCat(has_dtype ? DataTypeString(dtype) : "?", " ",
                      has_shape ? shape.DebugString() : "<unknown>");
}

// The dtypes of the node's outputs, or "" when distflow lacks its op or the
// node does not fit the op's definition.
std::string OutputTypes(const NodeDef& n, const std::set<std::string>& functions) {
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(n.op());
  if (reg == nullptr) return functions.contains(n.op()) ? "(function call)" : "";
  NodeDef with_defaults = n;
  AddDefaultsToNodeDef(reg->op_def, &with_defaults);
  DataTypeVector inputs, outputs;
  if (!InOutTypesForNode(with_defaults, reg->op_def, &inputs, &outputs).ok()) return "";
  if (outputs.empty()) return "(no outputs)";
  std::vector<std::string> names;
  for (DataType t : outputs) names.push_back(DataTypeString(t));
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::Status ShowGraph(const std::string& path, std::ostream& out) {
  GraphDef g;
  DF_RETURN_IF_ERROR(ReadGraphDefFromFile(path, &g));
  std::set<std::string> functions;
  for (const FunctionDef& f : g.library().function()) functions.insert(f.signature().name());
  out << path << ": " << g.node_size() << " nodes, " << functions.size() << " functions";
  if (g.has_versions()) out << ", producer version " << g.versions().producer();
  out << "\n";

  std::map<std::string, int> ops;
  std::map<std::string, int> devices;
  std::set<std::string> read;  // nodes some node reads (data or control)
  for (const NodeDef& n : g.node()) {
    ++ops[n.op()];
    ++devices[n.device().empty() ? "(any)" : n.device()];
    for (const std::string& input : n.input()) {
      TensorId id;
      if (ParseTensorName(input, &id).ok()) read.insert(std::string(id.node));
    }
  }
  int missing = 0;
  out << "\nops:\n";
  for (const auto& [op, count] : ops) {
    const bool known = OpRegistry::Global()->LookUp(op) != nullptr || functions.contains(op);
    missing += known ? 0 : 1;
    out << "  " << op << " " << count << (known ? "" : " (not in distflow)") << "\n";
  }
  if (missing > 0) out << "  " << missing << " of " << ops.size() << " ops not in distflow\n";
  out << "\ndevices:\n";
  for (const auto& [device, count] : devices) out << "  " << device << " " << count << "\n";
  out << "\nplaceholders (feeds):\n";
  for (const NodeDef& n : g.node()) {
    if (n.op() == "Placeholder" || n.op() == "PlaceholderWithDefault" ||
        n.op() == "PlaceholderV2") {
      out << "  " << n.name() << " " << PlaceholderType(n)
          << (n.op() == "PlaceholderWithDefault" ? " (has a default)" : "") << "\n";
    }
  }
  out << "\nsinks (fetches and targets):\n";
  for (const NodeDef& n : g.node()) {
    if (read.contains(n.name())) continue;
    const std::string types = OutputTypes(n, functions);
    out << "  " << n.name() << " (" << n.op() << ")" << (types.empty() ? "" : " ") << types << "\n";
  }
  return absl::OkStatus();
}

}  // namespace distflow
