#include "distflow/framework/function.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace distflow {
namespace {

// TensorFlow's function names: letters, digits and "_.-/<>" (tf.function
// writes names like "__inference_f_42", and "__inference_<lambda>_7" for a
// lambda).
bool IsValidFunctionName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '<' ||
          c == '>')) {
      return false;
    }
  }
  return true;
}

std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const FunctionLibraryDefinition>> FunctionLibraryDefinition::Create(
    const FunctionDefLibrary& library, const OpRegistry* ops) {
  std::shared_ptr<FunctionLibraryDefinition> lib(new FunctionLibraryDefinition);
  lib->ops_ = ops;
  lib->library_ = library;
  for (const FunctionDef& f : lib->library_.function()) {
    const std::string& name = f.signature().name();
    if (!IsValidFunctionName(name)) {
      return errors::InvalidArgument("function name '", name, "' in the library is not valid",
                                     name.empty() ? " (empty)" : "");
    }
    if (ops->LookUp(name) != nullptr) {
      return errors::InvalidArgument("function '", name,
                                     "' has the name of a registered op; rename the function");
    }
    if (!lib->by_name_.emplace(name, &f).second) {
      return errors::InvalidArgument("function '", name, "' is defined twice in the library");
    }
  }
  for (const GradientDef& g : lib->library_.gradient()) {
    if (!lib->gradients_.emplace(g.function_name(), g.gradient_func()).second) {
      return errors::InvalidArgument("function '", g.function_name(),
                                     "' has two gradient functions in the library");
    }
  }
  return std::shared_ptr<const FunctionLibraryDefinition>(std::move(lib));
}

const FunctionDef* FunctionLibraryDefinition::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::Status FunctionLibraryDefinition::LookUpOpDef(absl::string_view op,
                                                    const OpDef** op_def) const {
  if (const OpRegistrationData* data = ops_->LookUp(op)) {
    *op_def = &data->op_def;
    return absl::OkStatus();
  }
  if (const FunctionDef* f = Find(op)) {
    *op_def = &f->signature();
    return absl::OkStatus();
  }
  return errors::Unimplemented("op '", op, "' is not registered");
}

std::string FunctionLibraryDefinition::FindGradient(absl::string_view function) const {
  auto it = gradients_.find(function);
  return it == gradients_.end() ? std::string() : it->second;
}

std::string FunctionInstantiationKey(const NameAttrList& func) {
  std::vector<std::pair<std::string, const AttrValue*>> attrs;
  for (const auto& [name, value] : func.attr()) attrs.emplace_back(name, &value);
  std::sort(attrs.begin(), attrs.end());
  std::string key = func.name();
  for (const auto& [name, value] : attrs) {
    const std::string bytes = DeterministicBytes(*value);
    absl::StrAppend(&key, "|", name, "=", bytes.size(), ":", bytes);
  }
  return key;
}

std::string FunctionLibraryKey(const FunctionDefLibrary& library) {
  return DeterministicBytes(library);
}

}  // namespace distflow
