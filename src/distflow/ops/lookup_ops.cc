// Lookup-table ops, as TensorFlow's feature columns use them (a vocabulary
// list becomes a HashTableV2 filled by LookupTableImportV2 in the init op, a
// vocabulary file one filled by InitializeTableFromTextFileV2 from an
// asset; both read by LookupTableFindV2); kernels/lookup_table.h says what a table
// holds. Names, inputs and attrs follow TensorFlow's.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status FindShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status ImportShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("HashTableV2")
    .Output("table_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("use_node_name_sharing: bool = false")
    .Attr("key_dtype: type")
    .Attr("value_dtype: type")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("A handle to the hash table named shared_name (or the node's name), made when first run.");

REGISTER_OP("LookupTableImportV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Input("values: Tout")
    .Attr("Tin: type")
    .Attr("Tout: type")
    .SetIsStateful()
    .SetShapeFn(ImportShape)
    .Doc("Fills the table with keys[i] -> values[i].");

REGISTER_OP("InitializeTableFromTextFileV2")
    .Input("table_handle: resource")
    .Input("filename: string")
    .Attr("key_index: int >= -2")
    .Attr("value_index: int >= -2")
    .Attr("vocab_size: int >= -1 = -1")
    .Attr("delimiter: string = '\t'")
    .Attr("offset: int = 0")
    .SetIsStateful()
    .SetShapeFn(ImportShape)
    .Doc(
        "Fills the table from a text file, one entry per line: key and value are the "
        "delimiter-separated columns key_index and value_index, -1 the whole line, -2 the line "
        "number (plus offset); vocab_size (-1: all) lines.");

REGISTER_OP("LookupTableFindV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Input("default_value: Tout")
    .Output("values: Tout")
    .Attr("Tin: type")
    .Attr("Tout: type")
    .SetIsStateful()
    .SetShapeFn(FindShape)
    .Doc("The value of each key, or default_value for keys the table lacks.");

REGISTER_OP("LookupTableSizeV2")
    .Input("table_handle: resource")
    .Output("size: int64")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("The number of entries of the table.");

}  // namespace distflow
