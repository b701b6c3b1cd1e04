// distflow._distflow.op_defs(): every registered op's signature, from which
// distflow/raw_ops.py generates one Python function per op at import time.
#include "op_defs.h"

#include <string>
#include <vector>

#include "distflow/framework/op_registry.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

py::list ArgsToPython(const google::protobuf::RepeatedPtrField<OpDef::ArgDef>& args) {
  py::list result;
  for (const OpDef::ArgDef& a : args) {
    py::dict arg;
    arg["name"] = a.name();
    arg["type"] = static_cast<int>(a.type());
    arg["type_attr"] = a.type_attr();
    arg["number_attr"] = a.number_attr();
    arg["type_list_attr"] = a.type_list_attr();
    arg["is_ref"] = a.is_ref();
    result.append(arg);
  }
  return result;
}

}  // namespace

void RegisterOpDefs(py::module_& m) {
  m.def("op_defs", [] {
    py::list defs;
    const OpRegistry* registry = OpRegistry::Global();
    for (const std::string& name : registry->ListOpNames()) {
      const OpDef* op_def = nullptr;
      if (!registry->LookUpOpDef(name, &op_def).ok()) continue;
      py::dict d;
      d["name"] = op_def->name();
      d["inputs"] = ArgsToPython(op_def->input_arg());
      d["outputs"] = ArgsToPython(op_def->output_arg());
      py::list attrs;
      for (const OpDef::AttrDef& a : op_def->attr()) {
        py::dict attr;
        attr["name"] = a.name();
        attr["type"] = a.type();
        attr["has_default"] = a.has_default_value();
        attrs.append(attr);
      }
      d["attrs"] = attrs;
      d["is_stateful"] = op_def->is_stateful();
      d["summary"] = op_def->summary();
      defs.append(d);
    }
    return defs;
  });
}

}  // namespace python
}  // namespace distflow
