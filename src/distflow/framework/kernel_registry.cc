#include "distflow/framework/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "distflow/framework/op_registry.h"

namespace distflow {

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry;
  return registry;
}

void KernelRegistry::Register(KernelDef def, KernelFactory factory) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(std::make_unique<Entry>(Entry{std::move(def), std::move(factory)}));
}

namespace {

bool Satisfies(const KernelDef& def, const NodeDef& node_def) {
  for (const auto& constraint : def.type_constraints) {
    // A named reference, not a structured binding: lambdas may not capture
    // bindings before C++20 as clang 14 implements it.
    const auto& allowed = constraint.second;
    auto it = node_def.attr().find(constraint.first);
    if (it == node_def.attr().end()) return false;
    const AttrValue& v = it->second;
    auto ok = [&](int t) {
      return std::find(allowed.begin(), allowed.end(), static_cast<DataType>(t)) != allowed.end();
    };
    if (v.value_case() == AttrValue::kType) {
      if (!ok(v.type())) return false;
    } else if (v.value_case() == AttrValue::kList) {
      for (int t : v.list().type()) {
        if (!ok(t)) return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

std::string TypeAttrsSummary(const NodeDef& node_def) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : node_def.attr()) {
    if (value.value_case() == AttrValue::kType ||
        (value.value_case() == AttrValue::kList && value.list().type_size() > 0)) {
      parts.push_back(absl::StrCat(name, "=", SummarizeAttrValue(value)));
    }
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<const KernelRegistry::Entry*> KernelRegistry::Find(absl::string_view device_type,
                                                                  const NodeDef& node_def) const {
  absl::MutexLock lock(&mu_);
  const Entry* best = nullptr;
  bool any_for_op = false;
  for (const auto& e : entries_) {
    if (e->def.op != node_def.op() || e->def.device_type != device_type) continue;
    any_for_op = true;
    if (Satisfies(e->def, node_def)) {
      best = e.get();
      break;
    }
  }
  if (best == nullptr) {
    const std::string attrs = TypeAttrsSummary(node_def);
    return errors::NotFound("no ", device_type, " kernel registered for ",
                            FormatNodeForError(node_def),
                            any_for_op && !attrs.empty() ? absl::StrCat(" with ", attrs) : "");
  }
  return best;
}

absl::StatusOr<const KernelDef*> KernelRegistry::FindKernelDef(absl::string_view device_type,
                                                               const NodeDef& node_def) const {
  DF_ASSIGN_OR_RETURN(const Entry* e, Find(device_type, node_def));
  return &e->def;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    DeviceBase* device, const NodeDef& node_def, FunctionLibraryRuntime* function_library) const {
  const OpDef* op_def;
  DF_RETURN_IF_ERROR(errors::Annotate(OpRegistry::Global()->LookUpOpDef(node_def.op(), &op_def),
                                      absl::StrCat("node '", node_def.name(), "': ")));
  DF_ASSIGN_OR_RETURN(const Entry* e, Find(device->device_type(), node_def));
  DataTypeVector inputs, outputs;
  DF_RETURN_IF_ERROR(InOutTypesForNode(node_def, *op_def, &inputs, &outputs));
  OpKernelConstruction ctx(device, node_def, *op_def, inputs, outputs, function_library);
  std::unique_ptr<OpKernel> kernel(e->factory(&ctx));
  if (!ctx.status().ok()) {
    return errors::Annotate(ctx.status(), absl::StrCat(FormatNodeForError(node_def), ": "));
  }
  return kernel;
}

std::vector<std::string> KernelRegistry::SupportedDeviceTypes(const NodeDef& node_def) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> types;
  for (const auto& e : entries_) {
    if (e->def.op != node_def.op() || !Satisfies(e->def, node_def)) continue;
    if (std::find(types.begin(), types.end(), e->def.device_type) == types.end()) {
      types.push_back(e->def.device_type);
    }
  }
  return types;
}

}  // namespace distflow
