#include "distflow/framework/op_def_builder.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distflow/core/status.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace {

absl::string_view Trim(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || c == '_')) return false;
  }
  return true;
}

// Named type sets usable in Attr("T: <set>").
bool NamedTypeSet(absl::string_view name, DataTypeSlice* out) {
  if (name == "numbertypes" || name == "realnumbertypes") {
    *out = AllNumberTypes();
  } else if (name == "floatingpointtypes") {
    *out = FloatingTypes();
  } else if (name == "integertypes") {
    *out = IntegerTypes();
  } else if (name == "alltypes") {
    *out = AllTypes();
  } else {
    return false;
  }
  return true;
}

// Parses "{a, b}" into allowed_values of kind `elem` ("type" or "string").
absl::Status ParseAllowed(absl::string_view elem, absl::string_view body, AttrValue* allowed) {
  auto* list = allowed->mutable_list();
  for (absl::string_view piece : absl::StrSplit(body, ',')) {
    piece = Trim(piece);
    if (piece.empty()) continue;
    if (elem == "type") {
      DataType t;
      if (!DataTypeFromString(piece, &t)) {
        return errors::InvalidArgument("unknown type '", piece, "'");
      }
      list->add_type(t);
    } else {
      if (piece.size() < 2 || (piece.front() != '\'' && piece.front() != '"')) {
        return errors::InvalidArgument("expected a quoted string, got '", piece, "'");
      }
      list->add_s(std::string(piece.substr(1, piece.size() - 2)));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseAttr(absl::string_view spec, OpDef::AttrDef* attr) {
  std::vector<absl::string_view> name_rest = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (name_rest.size() != 2 || !IsIdentifier(Trim(name_rest[0]))) {
    return errors::InvalidArgument("expected 'name: type', got '", spec, "'");
  }
  attr->set_name(std::string(Trim(name_rest[0])));
  absl::string_view rest = Trim(name_rest[1]);
  absl::string_view default_text;
  // The default follows the first '=' that is not part of a ">=" minimum.
  size_t eq = rest.find('=');
  while (eq != absl::string_view::npos && eq > 0 && rest[eq - 1] == '>') {
    eq = rest.find('=', eq + 1);
  }
  if (eq != absl::string_view::npos) {
    default_text = Trim(rest.substr(eq + 1));
    rest = Trim(rest.substr(0, eq));
  }
  absl::string_view minimum_text;
  if (size_t ge = rest.find(">="); ge != absl::string_view::npos) {
    minimum_text = Trim(rest.substr(ge + 2));
    rest = Trim(rest.substr(0, ge));
  }
  bool is_list = false;
  if (absl::StartsWith(rest, "list(") && absl::EndsWith(rest, ")")) {
    is_list = true;
    rest = Trim(rest.substr(5, rest.size() - 6));
  }
  std::string elem;
  DataTypeSlice named;
  if (absl::StartsWith(rest, "{") && absl::EndsWith(rest, "}")) {
    absl::string_view body = rest.substr(1, rest.size() - 2);
    const bool strings = absl::StrContains(body, '\'') || absl::StrContains(body, '"');
    elem = strings ? "string" : "type";
    DF_RETURN_IF_ERROR(ParseAllowed(elem, body, attr->mutable_allowed_values()));
  } else if (NamedTypeSet(rest, &named)) {
    elem = "type";
    for (DataType t : named) attr->mutable_allowed_values()->mutable_list()->add_type(t);
  } else if (rest == "string" || rest == "int" || rest == "float" || rest == "bool" ||
             rest == "type" || rest == "shape" || rest == "tensor" || rest == "func") {
    elem = std::string(rest);
  } else {
    return errors::InvalidArgument("unknown attr type '", rest, "' in '", spec, "'");
  }
  attr->set_type(is_list ? "list(" + elem + ")" : elem);
  if (!minimum_text.empty()) {
    int64_t m;
    if (!absl::SimpleAtoi(minimum_text, &m)) {
      return errors::InvalidArgument("bad minimum '", minimum_text, "' in '", spec, "'");
    }
    attr->set_has_minimum(true);
    attr->set_minimum(m);
  }
  if (!default_text.empty()) {
    DF_RETURN_IF_ERROR(ParseAttrValue(attr->type(), default_text, attr->mutable_default_value()));
  }
  return absl::OkStatus();
}

OpDef::AttrDef* FindAttr(OpDef* op_def, absl::string_view name) {
  for (auto& a : *op_def->mutable_attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// Fixed types an arg spec may name directly.
bool ArgFixedType(absl::string_view name, DataType* t) {
  static constexpr absl::string_view kNames[] = {
      "float",  "double", "int32", "int64",  "uint8",    "int8",     "int16",   "uint16",
      "uint32", "uint64", "bool",  "string", "bfloat16", "resource", "variant", "half"};
  for (absl::string_view n : kNames) {
    if (n == name) return DataTypeFromString(name, t);
  }
  return false;
}

absl::Status ParseArg(absl::string_view spec, OpDef* op_def, OpDef::ArgDef* arg) {
  std::vector<absl::string_view> name_rest = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (name_rest.size() != 2 || !IsIdentifier(Trim(name_rest[0]))) {
    return errors::InvalidArgument("expected 'name: type', got '", spec, "'");
  }
  arg->set_name(std::string(Trim(name_rest[0])));
  absl::string_view rest = Trim(name_rest[1]);
  if (absl::StartsWith(rest, "Ref(") && absl::EndsWith(rest, ")")) {
    arg->set_is_ref(true);
    rest = Trim(rest.substr(4, rest.size() - 5));
  }
  if (size_t star = rest.find('*'); star != absl::string_view::npos) {
    const std::string number(Trim(rest.substr(0, star)));
    rest = Trim(rest.substr(star + 1));
    if (!IsIdentifier(number)) {
      return errors::InvalidArgument("bad number attr '", number, "' in '", spec, "'");
    }
    arg->set_number_attr(number);
    OpDef::AttrDef* a = FindAttr(op_def, number);
    if (a == nullptr) {
      a = op_def->add_attr();
      a->set_name(number);
      a->set_type("int");
      a->set_has_minimum(true);
      a->set_minimum(1);
    } else if (a->type() != "int") {
      return errors::InvalidArgument("attr '", number, "' used as a count in '", spec,
                                     "' must be an int");
    }
  }
  DataType fixed;
  if (ArgFixedType(rest, &fixed)) {
    arg->set_type(fixed);
    return absl::OkStatus();
  }
  if (!IsIdentifier(rest)) {
    return errors::InvalidArgument("bad type '", rest, "' in '", spec, "'");
  }
  OpDef::AttrDef* a = FindAttr(op_def, rest);
  if (a == nullptr) {
    a = op_def->add_attr();
    a->set_name(std::string(rest));
    a->set_type("type");
  }
  if (a->type() == "type") {
    arg->set_type_attr(std::string(rest));
  } else if (a->type() == "list(type)" && arg->number_attr().empty()) {
    arg->set_type_list_attr(std::string(rest));
  } else {
    return errors::InvalidArgument("attr '", rest, "' used as a type in '", spec, "' has type ",
                                   a->type());
  }
  return absl::OkStatus();
}

}  // namespace

OpDefBuilder::OpDefBuilder(std::string op_name) { op_def_.set_name(std::move(op_name)); }

OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  op_def_.set_is_commutative(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsAggregate() {
  op_def_.set_is_aggregate(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  op_def_.set_is_stateful(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  op_def_.set_allows_uninitialized_input(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeInferenceFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string summary) {
  op_def_.set_summary(std::move(summary));
  return *this;
}

absl::Status OpDefBuilder::Finalize(OpRegistrationData* out) const {
  OpDef op_def = op_def_;
  auto fail = [&](const absl::Status& s) {
    return errors::InvalidArgument("op '", op_def_.name(), "': ", s.message());
  };
  for (const std::string& spec : attrs_) {
    OpDef::AttrDef attr;
    absl::Status s = ParseAttr(spec, &attr);
    if (!s.ok()) return fail(s);
    if (FindAttr(&op_def, attr.name()) != nullptr) {
      return fail(errors::InvalidArgument("attr '", attr.name(), "' declared twice"));
    }
    *op_def.add_attr() = std::move(attr);
  }
  for (const std::string& spec : inputs_) {
    absl::Status s = ParseArg(spec, &op_def, op_def.add_input_arg());
    if (!s.ok()) return fail(s);
  }
  for (const std::string& spec : outputs_) {
    absl::Status s = ParseArg(spec, &op_def, op_def.add_output_arg());
    if (!s.ok()) return fail(s);
  }
  out->op_def = std::move(op_def);
  out->shape_fn = shape_fn_ ? shape_fn_ : ShapeInferenceFn(UnknownShape);
  return absl::OkStatus();
}

}  // namespace distflow
