#include "checkpoint_command.h"

#include "distflow/core/status.h"
#include "distflow/framework/tensor_bundle.h"
#include "npy.h"

namespace distflow {

absl::Status ListCheckpoint(const std::string& prefix, std::ostream& out) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  for (const std::string& name : reader->Names()) {
    const BundleEntryProto* e = reader->Find(name);
    TensorShape shape;
    DF_RETURN_IF_ERROR(TensorShape::FromProto(e->shape(), &shape));
    out << name << '\t' << DataTypeString(e->dtype()) << '\t' << shape.DebugString() << '\n';
  }
  return absl::OkStatus();
}

absl::Status DumpCheckpointTensor(const std::string& prefix, const std::string& name,
                                  const std::string& npy_path) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  const BundleEntryProto* e = reader->Find(name);
  if (e == nullptr || name.empty() || name.front() == '\0') {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix,
                            "' (distflow checkpoint list ", prefix, " lists its tensors)");
  }
  DF_ASSIGN_OR_RETURN(Tensor t, reader->Read(name, e->dtype()));
  return errors::Annotate(WriteNpyFile(t, npy_path),
                          absl::StrCat("writing tensor '", name, "' to ", npy_path, ": "));
}

}  // namespace distflow
