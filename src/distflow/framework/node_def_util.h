// Reading attrs of a NodeDef, checking a NodeDef against its OpDef, filling
// default attrs, and computing a node's input and output types. Every error
// names the node, and the attr or input, with the expected and found values.
#ifndef DISTFLOW_FRAMEWORK_NODE_DEF_UTIL_H_
#define DISTFLOW_FRAMEWORK_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/types.h"
#include "distflow/node_def.pb.h"
#include "distflow/op_def.pb.h"

namespace distflow {

// A read-only view of a NodeDef's attrs (or any attr map) that knows which
// node it belongs to, for error messages.
class AttrSlice {
 public:
  AttrSlice(const NodeDef& node_def);  // NOLINT: implicit on purpose
  explicit AttrSlice(const google::protobuf::Map<std::string, AttrValue>* attrs);

  // nullptr when absent.
  const AttrValue* Find(absl::string_view name) const;
  // NotFound naming the node and attr when absent.
  absl::Status Find(absl::string_view name, const AttrValue** value) const;
  const google::protobuf::Map<std::string, AttrValue>& attrs() const { return *attrs_; }
  // "node 'x' (MatMul)" or "attrs" for a bare map.
  std::string Describe() const;

 private:
  const NodeDef* node_def_ = nullptr;
  const google::protobuf::Map<std::string, AttrValue>* attrs_;
};

// Reads attr `name` as T. NotFound when missing; InvalidArgument, naming the
// node, attr, expected and found types, when it has another type.
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::string* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, int64_t* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, int32_t* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, float* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, bool* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, DataType* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, TensorShape* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, PartialTensorShape* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, Tensor* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, const TensorProto** value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<std::string>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<int64_t>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<int32_t>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<float>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<DataType>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<PartialTensorShape>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<TensorShape>* value);
bool HasNodeAttr(const NodeDef& node_def, absl::string_view name);

template <typename T>
void AddNodeAttr(absl::string_view name, T&& value, NodeDef* node_def) {
  AttrValue v;
  SetAttrValue(std::forward<T>(value), &v);
  (*node_def->mutable_attr())[std::string(name)] = std::move(v);
}
template <typename T>
void AddNodeAttr(absl::string_view name, std::initializer_list<T> value, NodeDef* node_def) {
  AttrValue v;
  SetAttrValue(value, &v);
  (*node_def->mutable_attr())[std::string(name)] = std::move(v);
}

// Adds every attr the OpDef has a default for and the NodeDef lacks.
void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def);

// Checks the node against its op: every attr present (after defaults) with
// the right type, allowed value and minimum; no unknown attrs (names starting
// with '_' are internal and always allowed); the number of data inputs; data
// inputs before control inputs.
absl::Status ValidateNodeDef(const NodeDef& node_def, const OpDef& op_def);

// The dtypes of the node's inputs and outputs, resolved from its attrs.
absl::Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs);

// For each input/output arg name, the [start, end) range of tensor indices.
using NameRangeMap = absl::flat_hash_map<std::string, std::pair<int, int>>;
absl::Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                               NameRangeMap* outputs);

// "node 'x' (MatMul)", used as the prefix of node errors.
std::string FormatNodeForError(const NodeDef& node_def);

// Node names: letters, digits, and ./_- after a first letter, digit or '.'.
bool IsValidNodeName(absl::string_view name);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_NODE_DEF_UTIL_H_
