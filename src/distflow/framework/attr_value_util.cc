#include "distflow/framework/attr_value_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"

namespace distflow {

void SetAttrValue(absl::string_view value, AttrValue* out) { out->set_s(std::string(value)); }
void SetAttrValue(const char* value, AttrValue* out) { out->set_s(value); }
void SetAttrValue(const std::string& value, AttrValue* out) { out->set_s(value); }
void SetAttrValue(int64_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(int32_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(float value, AttrValue* out) { out->set_f(value); }
void SetAttrValue(double value, AttrValue* out) { out->set_f(static_cast<float>(value)); }
void SetAttrValue(bool value, AttrValue* out) { out->set_b(value); }
void SetAttrValue(DataType value, AttrValue* out) { out->set_type(value); }
void SetAttrValue(const TensorShape& value, AttrValue* out) { value.AsProto(out->mutable_shape()); }
void SetAttrValue(const PartialTensorShape& value, AttrValue* out) {
  value.AsProto(out->mutable_shape());
}
void SetAttrValue(const TensorShapeProto& value, AttrValue* out) { *out->mutable_shape() = value; }
void SetAttrValue(const Tensor& value, AttrValue* out) {
  TensorToProto(value, out->mutable_tensor());
}
void SetAttrValue(const TensorProto& value, AttrValue* out) { *out->mutable_tensor() = value; }
void SetAttrValue(const NameAttrList& value, AttrValue* out) { *out->mutable_func() = value; }
void SetAttrValue(const AttrValue& value, AttrValue* out) { *out = value; }

void SetAttrValue(absl::Span<const std::string> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const auto& v : value) list->add_s(v);
}
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (auto v : value) list->add_i(v);
}
void SetAttrValue(absl::Span<const int32_t> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (auto v : value) list->add_i(v);
}
void SetAttrValue(absl::Span<const float> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (auto v : value) list->add_f(v);
}
void SetAttrValue(absl::Span<const bool> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (auto v : value) list->add_b(v);
}
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (auto v : value) list->add_type(v);
}
void SetAttrValue(absl::Span<const TensorShape> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const auto& v : value) v.AsProto(list->add_shape());
}
void SetAttrValue(absl::Span<const PartialTensorShape> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const auto& v : value) v.AsProto(list->add_shape());
}
void SetAttrValue(absl::Span<const Tensor> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const auto& v : value) TensorToProto(v, list->add_tensor());
}

namespace {

// The AttrValue oneof case (or list element kind) an OpDef type string needs.
absl::Status CheckScalarKind(const AttrValue& v, absl::string_view type) {
  using C = AttrValue::ValueCase;
  C want;
  if (type == "string")
    want = AttrValue::kS;
  else if (type == "int")
    want = AttrValue::kI;
  else if (type == "float")
    want = AttrValue::kF;
  else if (type == "bool")
    want = AttrValue::kB;
  else if (type == "type")
    want = AttrValue::kType;
  else if (type == "shape")
    want = AttrValue::kShape;
  else if (type == "tensor")
    want = AttrValue::kTensor;
  else if (type == "func")
    want = AttrValue::kFunc;
  else
    return errors::InvalidArgument("unknown attr type '", type, "'");
  if (v.value_case() != want) {
    return errors::InvalidArgument("expected a value of type ", type, ", found ",
                                   SummarizeAttrValue(v));
  }
  return absl::OkStatus();
}

absl::Status CheckListKind(const AttrValue& v, absl::string_view elem) {
  if (v.value_case() != AttrValue::kList) {
    return errors::InvalidArgument("expected a value of type list(", elem, "), found ",
                                   SummarizeAttrValue(v));
  }
  const auto& l = v.list();
  int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0) +
              (l.type_size() > 0) + (l.shape_size() > 0) + (l.tensor_size() > 0) +
              (l.func_size() > 0);
  if (kinds == 0) return absl::OkStatus();  // empty list fits every type
  bool ok = false;
  if (elem == "string")
    ok = l.s_size() > 0;
  else if (elem == "int")
    ok = l.i_size() > 0;
  else if (elem == "float")
    ok = l.f_size() > 0;
  else if (elem == "bool")
    ok = l.b_size() > 0;
  else if (elem == "type")
    ok = l.type_size() > 0;
  else if (elem == "shape")
    ok = l.shape_size() > 0;
  else if (elem == "tensor")
    ok = l.tensor_size() > 0;
  else if (elem == "func")
    ok = l.func_size() > 0;
  else
    return errors::InvalidArgument("unknown attr type 'list(", elem, ")'");
  if (!ok || kinds > 1) {
    return errors::InvalidArgument("expected a value of type list(", elem, "), found ",
                                   SummarizeAttrValue(v));
  }
  return absl::OkStatus();
}

absl::string_view Trim(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

absl::Status ParseScalar(absl::string_view type, absl::string_view text, AttrValue* out) {
  text = Trim(text);
  if (type == "string") {
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
        text.back() == text.front()) {
      out->set_s(std::string(text.substr(1, text.size() - 2)));
      return absl::OkStatus();
    }
  } else if (type == "int") {
    int64_t v;
    if (absl::SimpleAtoi(text, &v)) {
      out->set_i(v);
      return absl::OkStatus();
    }
  } else if (type == "float") {
    float v;
    if (absl::SimpleAtof(text, &v)) {
      out->set_f(v);
      return absl::OkStatus();
    }
  } else if (type == "bool") {
    if (text == "true" || text == "false") {
      out->set_b(text == "true");
      return absl::OkStatus();
    }
  } else if (type == "type") {
    DataType t;
    if (DataTypeFromString(text, &t)) {
      out->set_type(t);
      return absl::OkStatus();
    }
  } else if (type == "shape") {
    TensorShapeProto shape;
    if (absl::StartsWith(text, "[")) {
      absl::string_view inner = Trim(text.substr(1, text.size() - 2));
      if (!inner.empty()) {
        for (absl::string_view d : absl::StrSplit(inner, ',')) {
          int64_t v;
          if (!absl::SimpleAtoi(Trim(d), &v)) {
            return errors::InvalidArgument("cannot parse '", text, "' as a shape");
          }
          shape.add_dim()->set_size(v);
        }
      }
      *out->mutable_shape() = shape;
      return absl::OkStatus();
    }
    std::string body(text);
    if (absl::StartsWith(body, "{")) body = body.substr(1, body.size() - 2);
    if (google::protobuf::TextFormat::ParseFromString(body, &shape)) {
      *out->mutable_shape() = shape;
      return absl::OkStatus();
    }
  } else if (type == "tensor") {
    std::string body(text);
    if (absl::StartsWith(body, "{")) body = body.substr(1, body.size() - 2);
    if (google::protobuf::TextFormat::ParseFromString(body, out->mutable_tensor())) {
      return absl::OkStatus();
    }
  }
  return errors::InvalidArgument("cannot parse '", text, "' as a value of type ", type);
}

}  // namespace

absl::Status AttrValueHasType(const AttrValue& value, absl::string_view type) {
  if (absl::StartsWith(type, "list(") && absl::EndsWith(type, ")")) {
    return CheckListKind(value, type.substr(5, type.size() - 6));
  }
  return CheckScalarKind(value, type);
}

absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out) {
  out->Clear();
  if (absl::StartsWith(type, "list(") && absl::EndsWith(type, ")")) {
    const absl::string_view elem = type.substr(5, type.size() - 6);
    text = Trim(text);
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
      return errors::InvalidArgument("cannot parse '", text, "' as a ", type);
    }
    auto* list = out->mutable_list();
    absl::string_view inner = Trim(text.substr(1, text.size() - 2));
    if (inner.empty()) return absl::OkStatus();
    for (absl::string_view piece : absl::StrSplit(inner, ',')) {
      AttrValue v;
      DF_RETURN_IF_ERROR(ParseScalar(elem, piece, &v));
      switch (v.value_case()) {
        case AttrValue::kS:
          list->add_s(v.s());
          break;
        case AttrValue::kI:
          list->add_i(v.i());
          break;
        case AttrValue::kF:
          list->add_f(v.f());
          break;
        case AttrValue::kB:
          list->add_b(v.b());
          break;
        case AttrValue::kType:
          list->add_type(v.type());
          break;
        case AttrValue::kShape:
          *list->add_shape() = v.shape();
          break;
        default:
          return errors::InvalidArgument("cannot parse '", text, "' as a ", type);
      }
    }
    return absl::OkStatus();
  }
  return ParseScalar(type, text, out);
}

namespace {
std::string ShapeString(const TensorShapeProto& s) {
  PartialTensorShape p;
  if (!PartialTensorShape::FromProto(s, &p).ok()) return "<invalid shape>";
  return p.DebugString();
}
}  // namespace

std::string SummarizeAttrValue(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS:
      return absl::StrCat("\"", absl::CEscape(value.s()), "\"");
    case AttrValue::kI:
      return absl::StrCat(value.i());
    case AttrValue::kF:
      return absl::StrCat(value.f());
    case AttrValue::kB:
      return value.b() ? "true" : "false";
    case AttrValue::kType:
      return DataTypeString(value.type());
    case AttrValue::kShape:
      return ShapeString(value.shape());
    case AttrValue::kTensor: {
      Tensor t;
      if (!TensorFromProto(value.tensor(), &t).ok()) return "<invalid tensor>";
      return t.DebugString();
    }
    case AttrValue::kFunc:
      return value.func().name();
    case AttrValue::kPlaceholder:
      return absl::StrCat("$", value.placeholder());
    case AttrValue::kList: {
      const auto& l = value.list();
      std::vector<std::string> parts;
      for (const auto& s : l.s()) parts.push_back(absl::StrCat("\"", absl::CEscape(s), "\""));
      for (auto i : l.i()) parts.push_back(absl::StrCat(i));
      for (auto f : l.f()) parts.push_back(absl::StrCat(f));
      for (auto b : l.b()) parts.push_back(b ? "true" : "false");
      for (auto t : l.type()) parts.push_back(DataTypeString(static_cast<DataType>(t)));
      for (const auto& s : l.shape()) parts.push_back(ShapeString(s));
      for (const auto& f : l.func()) parts.push_back(f.name());
      if (l.tensor_size() > 0) parts.push_back(absl::StrCat(l.tensor_size(), " tensors"));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case AttrValue::VALUE_NOT_SET:
      return "<unset>";
  }
  return "<unknown>";
}

bool AreAttrValuesEqual(const AttrValue& a, const AttrValue& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

}  // namespace distflow
