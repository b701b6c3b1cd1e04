// FunctionLibraryDefinition: the functions of a GraphDef's `library`, by
// name, with the gradient table (function -> gradient function). A node whose
// op names a library function is a call: the function's signature is its
// OpDef, so graph import resolves its input and output types like any op's.
// Built once and immutable after: every method is const and thread-safe.
#ifndef DISTFLOW_FRAMEWORK_FUNCTION_H_
#define DISTFLOW_FRAMEWORK_FUNCTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/op_registry.h"
#include "distflow/function.pb.h"

namespace distflow {

class FunctionLibraryDefinition {
 public:
  // Checks and indexes `library`: InvalidArgument naming the function when
  // a name is empty, invalid or repeated, when a function takes the name of
  // a registered op, or when a gradient entry is repeated; `ops` is the
  // registry function names must not shadow (borrowed, outlives the result).
  static absl::StatusOr<std::shared_ptr<const FunctionLibraryDefinition>> Create(
      const FunctionDefLibrary& library, const OpRegistry* ops = OpRegistry::Global());

  FunctionLibraryDefinition(const FunctionLibraryDefinition&) = delete;
  FunctionLibraryDefinition& operator=(const FunctionLibraryDefinition&) = delete;

  // nullptr when no function has that name.
  const FunctionDef* Find(absl::string_view name) const;
  // The op registry's OpDef for `op`, else the signature of the function of
  // that name. Unimplemented "op 'X' is not registered" when neither exists.
  absl::Status LookUpOpDef(absl::string_view op, const OpDef** op_def) const;
  // The gradient function registered for `function`; empty when none.
  std::string FindGradient(absl::string_view function) const;

  const FunctionDefLibrary& ToProto() const { return library_; }
  bool empty() const { return by_name_.empty(); }
  size_t num_functions() const { return by_name_.size(); }
  const OpRegistry* op_registry() const { return ops_; }

 private:
  FunctionLibraryDefinition() = default;

  const OpRegistry* ops_ = nullptr;
  FunctionDefLibrary library_;
  absl::flat_hash_map<std::string, const FunctionDef*> by_name_;
  absl::flat_hash_map<std::string, std::string> gradients_;
};

// A stable text key for a function instantiation: the name and its attrs in
// sorted order (used to cache instantiations).
std::string FunctionInstantiationKey(const NameAttrList& func);
// The library's bytes in deterministic order: equal libraries give equal keys.
std::string FunctionLibraryKey(const FunctionDefLibrary& library);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_FUNCTION_H_
