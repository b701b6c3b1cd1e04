#include "distflow/framework/node_def_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {

AttrSlice::AttrSlice(const NodeDef& node_def) : node_def_(&node_def), attrs_(&node_def.attr()) {}

AttrSlice::AttrSlice(const google::protobuf::Map<std::string, AttrValue>* attrs) : attrs_(attrs) {}

const AttrValue* AttrSlice::Find(absl::string_view name) const {
  auto it = attrs_->find(std::string(name));
  return it == attrs_->end() ? nullptr : &it->second;
}

absl::Status AttrSlice::Find(absl::string_view name, const AttrValue** value) const {
  *value = Find(name);
  if (*value == nullptr) {
    return errors::NotFound(Describe(), " has no attr named '", name, "'");
  }
  return absl::OkStatus();
}

std::string AttrSlice::Describe() const {
  return node_def_ ? FormatNodeForError(*node_def_) : std::string("attrs");
}

namespace {

absl::Status Get(const AttrSlice& attrs, absl::string_view name, absl::string_view type,
                 const AttrValue** v) {
  DF_RETURN_IF_ERROR(attrs.Find(name, v));
  absl::Status s = AttrValueHasType(**v, type);
  if (!s.ok()) {
    return errors::InvalidArgument(attrs.Describe(), ": attr '", name, "': ", s.message());
  }
  return absl::OkStatus();
}

}  // namespace

#define DF_SCALAR_GETTER(TYPE, ATTR_TYPE, EXPR)                                           \
  absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, TYPE* value) { \
    const AttrValue* v;                                                                   \
    DF_RETURN_IF_ERROR(Get(attrs, name, ATTR_TYPE, &v));                                  \
    *value = EXPR;                                                                        \
    return absl::OkStatus();                                                              \
  }
DF_SCALAR_GETTER(std::string, "string", v->s())
DF_SCALAR_GETTER(int64_t, "int", v->i())
DF_SCALAR_GETTER(float, "float", v->f())
DF_SCALAR_GETTER(bool, "bool", v->b())
DF_SCALAR_GETTER(DataType, "type", v->type())
#undef DF_SCALAR_GETTER

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, int32_t* value) {
  int64_t v;
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, name, &v));
  if (v < INT32_MIN || v > INT32_MAX) {
    return errors::InvalidArgument(attrs.Describe(), ": attr '", name, "' value ", v,
                                   " does not fit in int32");
  }
  *value = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, TensorShape* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "shape", &v));
  return errors::Annotate(TensorShape::FromProto(v->shape(), value),
                          absl::StrCat(attrs.Describe(), ": attr '", name, "': "));
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         PartialTensorShape* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "shape", &v));
  return errors::Annotate(PartialTensorShape::FromProto(v->shape(), value),
                          absl::StrCat(attrs.Describe(), ": attr '", name, "': "));
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, Tensor* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "tensor", &v));
  return errors::Annotate(TensorFromProto(v->tensor(), value),
                          absl::StrCat(attrs.Describe(), ": attr '", name, "': "));
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         const TensorProto** value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "tensor", &v));
  *value = &v->tensor();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<std::string>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(string)", &v));
  value->assign(v->list().s().begin(), v->list().s().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<int64_t>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(int)", &v));
  value->assign(v->list().i().begin(), v->list().i().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<int32_t>* value) {
  std::vector<int64_t> v;
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, name, &v));
  value->clear();
  for (int64_t x : v) {
    if (x < INT32_MIN || x > INT32_MAX) {
      return errors::InvalidArgument(attrs.Describe(), ": attr '", name, "' value ", x,
                                     " does not fit in int32");
    }
    value->push_back(static_cast<int32_t>(x));
  }
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<float>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(float)", &v));
  value->assign(v->list().f().begin(), v->list().f().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<DataType>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(type)", &v));
  value->clear();
  for (int t : v->list().type()) value->push_back(static_cast<DataType>(t));
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<PartialTensorShape>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(shape)", &v));
  value->clear();
  for (const auto& s : v->list().shape()) {
    PartialTensorShape p;
    DF_RETURN_IF_ERROR(errors::Annotate(PartialTensorShape::FromProto(s, &p),
                                        absl::StrCat(attrs.Describe(), ": attr '", name, "': ")));
    value->push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name,
                         std::vector<TensorShape>* value) {
  const AttrValue* v;
  DF_RETURN_IF_ERROR(Get(attrs, name, "list(shape)", &v));
  value->clear();
  for (const auto& s : v->list().shape()) {
    TensorShape p;
    DF_RETURN_IF_ERROR(errors::Annotate(TensorShape::FromProto(s, &p),
                                        absl::StrCat(attrs.Describe(), ": attr '", name, "': ")));
    value->push_back(std::move(p));
  }
  return absl::OkStatus();
}

bool HasNodeAttr(const NodeDef& node_def, absl::string_view name) {
  return node_def.attr().contains(std::string(name));
}

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def) {
  for (const auto& attr : op_def.attr()) {
    if (attr.has_default_value() && !node_def->attr().contains(attr.name())) {
      (*node_def->mutable_attr())[attr.name()] = attr.default_value();
    }
  }
}

std::string FormatNodeForError(const NodeDef& node_def) {
  return absl::StrCat("node '", node_def.name(), "' (", node_def.op(), ")");
}

bool IsValidNodeName(absl::string_view name) {
  if (name.empty()) return false;
  const char c0 = name[0];
  if (!(absl::ascii_isalnum(c0) || c0 == '.')) return false;
  for (char c : name.substr(1)) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-' || c == '/' || c == '>')) {
      return false;
    }
  }
  return true;
}

namespace {

absl::Status CheckAllowedAndMinimum(const NodeDef& node_def, const OpDef::AttrDef& def,
                                    const AttrValue& value) {
  // Built only for an error: this runs for every attr of every node imported.
  auto where = [&] {
    return absl::StrCat(FormatNodeForError(node_def), ": attr '", def.name(), "'");
  };
  if (def.has_allowed_values()) {
    const auto& allowed = def.allowed_values().list();
    auto check_type = [&](DataType t) -> absl::Status {
      for (int a : allowed.type()) {
        if (a == t) return absl::OkStatus();
      }
      std::vector<DataType> types;
      for (int a : allowed.type()) types.push_back(static_cast<DataType>(a));
      return errors::InvalidArgument(
          where(), " has value ", DataTypeString(t),
          " which is not in the allowed list: ", DataTypeSliceString(types));
    };
    auto check_string = [&](const std::string& s) -> absl::Status {
      for (const auto& a : allowed.s()) {
        if (a == s) return absl::OkStatus();
      }
      return errors::InvalidArgument(
          where(), " has value \"", s,
          "\" which is not in the allowed list: ", SummarizeAttrValue(def.allowed_values()));
    };
    if (def.type() == "type") DF_RETURN_IF_ERROR(check_type(value.type()));
    if (def.type() == "list(type)") {
      for (int t : value.list().type()) DF_RETURN_IF_ERROR(check_type(static_cast<DataType>(t)));
    }
    if (def.type() == "string") DF_RETURN_IF_ERROR(check_string(value.s()));
    if (def.type() == "list(string)") {
      for (const auto& s : value.list().s()) DF_RETURN_IF_ERROR(check_string(s));
    }
  }
  if (def.has_minimum()) {
    if (def.type() == "int" && value.i() < def.minimum()) {
      return errors::InvalidArgument(where(), " has value ", value.i(),
                                     " which is less than the minimum ", def.minimum());
    }
    if (absl::StartsWith(def.type(), "list(")) {
      const auto& l = value.list();
      const int64_t n = l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() +
                        l.shape_size() + l.tensor_size() + l.func_size();
      if (n < def.minimum()) {
        return errors::InvalidArgument(where(), " has length ", n,
                                       " which is less than the minimum ", def.minimum());
      }
    }
  }
  return absl::OkStatus();
}

// The most tensors one list argument (an attr like AddN's N) may stand for.
constexpr int64_t kMaxArgCount = int64_t{1} << 24;

// Appends the types of one arg; sets *count to how many tensors it stands for.
absl::Status AddArgTypes(const NodeDef& node_def, const OpDef::ArgDef& arg, DataTypeVector* types) {
  const AttrSlice attrs(node_def);
  auto maybe_ref = [&](DataType t) { return arg.is_ref() ? MakeRefType(t) : t; };
  if (!arg.type_list_attr().empty()) {
    std::vector<DataType> list;
    DF_RETURN_IF_ERROR(GetNodeAttr(attrs, arg.type_list_attr(), &list));
    for (DataType t : list) types->push_back(maybe_ref(t));
    return absl::OkStatus();
  }
  DataType t = arg.type();
  if (!arg.type_attr().empty()) DF_RETURN_IF_ERROR(GetNodeAttr(attrs, arg.type_attr(), &t));
  int64_t n = 1;
  if (!arg.number_attr().empty()) {
    DF_RETURN_IF_ERROR(GetNodeAttr(attrs, arg.number_attr(), &n));
    if (n < 0) {
      return errors::InvalidArgument(FormatNodeForError(node_def), ": attr '", arg.number_attr(),
                                     "' must be >= 0, got ", n);
    }
    // The count is untrusted: bound it before a vector of that many types is
    // built (an AddN claiming N = 2^62 inputs must not exhaust memory).
    if (n > kMaxArgCount) {
      return errors::InvalidArgument(FormatNodeForError(node_def), ": attr '", arg.number_attr(),
                                     "' = ", n, " exceeds the limit of ", kMaxArgCount,
                                     " tensors per argument");
    }
  }
  for (int64_t i = 0; i < n; ++i) types->push_back(maybe_ref(t));
  return absl::OkStatus();
}

}  // namespace

absl::Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs) {
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op_def.input_arg()) DF_RETURN_IF_ERROR(AddArgTypes(node_def, arg, inputs));
  for (const auto& arg : op_def.output_arg())
    DF_RETURN_IF_ERROR(AddArgTypes(node_def, arg, outputs));
  return absl::OkStatus();
}

absl::Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                               NameRangeMap* outputs) {
  auto fill = [&](const auto& args, NameRangeMap* map) -> absl::Status {
    DataTypeVector types;
    for (const auto& arg : args) {
      const int start = static_cast<int>(types.size());
      DF_RETURN_IF_ERROR(AddArgTypes(node_def, arg, &types));
      if (map) (*map)[arg.name()] = {start, static_cast<int>(types.size())};
    }
    return absl::OkStatus();
  };
  DF_RETURN_IF_ERROR(fill(op_def.input_arg(), inputs));
  return fill(op_def.output_arg(), outputs);
}

absl::Status ValidateNodeDef(const NodeDef& node_def, const OpDef& op_def) {
  // Built only for an error: this runs for every node imported.
  auto node = [&] { return FormatNodeForError(node_def); };
  if (node_def.op() != op_def.name()) {
    return errors::InvalidArgument(node(), " does not match op '", op_def.name(), "'");
  }
  // Attrs: every declared attr present with the right kind and constraints.
  for (const auto& def : op_def.attr()) {
    auto it = node_def.attr().find(def.name());
    if (it == node_def.attr().end()) {
      return errors::InvalidArgument(node(), " is missing attr '", def.name(), "' of type ",
                                     def.type());
    }
    absl::Status s = AttrValueHasType(it->second, def.type());
    if (!s.ok()) {
      return errors::InvalidArgument(node(), ": attr '", def.name(), "': ", s.message());
    }
    DF_RETURN_IF_ERROR(CheckAllowedAndMinimum(node_def, def, it->second));
  }
  for (const auto& [name, value] : node_def.attr()) {
    if (absl::StartsWith(name, "_")) continue;
    bool known = false;
    for (const auto& def : op_def.attr()) known |= def.name() == name;
    if (!known) {
      return errors::InvalidArgument(node(), " has attr '", name, "' which op '", op_def.name(),
                                     "' does not define");
    }
  }
  // Inputs: data inputs first, then control inputs, and the right count.
  int num_data = 0;
  bool seen_control = false;
  for (const std::string& in : node_def.input()) {
    if (absl::StartsWith(in, "^")) {
      seen_control = true;
    } else {
      if (seen_control) {
        return errors::InvalidArgument(node(), ": data input '", in,
                                       "' comes after a control input");
      }
      ++num_data;
    }
  }
  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(node_def, op_def, &in_types, &out_types));
  if (num_data != static_cast<int>(in_types.size())) {
    return errors::InvalidArgument(node(), " expects ", in_types.size(), " data inputs but has ",
                                   num_data);
  }
  return absl::OkStatus();
}

}  // namespace distflow
