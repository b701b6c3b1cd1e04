// Session bundles: the export format TensorFlow Serving read before
// SavedModel (TF 0.x to 1.0). A bundle directory holds export.meta (a bare
// MetaGraphDef) and a checkpoint with prefix "export" (export.index +
// export.data-*), optionally assets/. Its signatures are a Signatures proto
// in the "serving_signatures" collection (proto/distflow/session_bundle.proto).
//
// distflow reads a bundle as a SavedModel with one MetaGraphDef tagged
// "serve", converting the signatures as TensorFlow Serving's bundle shim
// does: a default regression or classification signature becomes
// "serving_default" (regress or classify method); named generic signatures
// "inputs" and "outputs" become a predict signature (named
// "serving_default" unless that name is taken, then "predict") whose inputs
// and outputs are their maps; other named regression or classification
// signatures keep their names. Each TensorInfo gets the dtype its node
// declares (and its shape where the node recorded _output_shapes).
// Stateless; thread-safe.
#ifndef DISTFLOW_SAVED_MODEL_SESSION_BUNDLE_H_
#define DISTFLOW_SAVED_MODEL_SESSION_BUNDLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "distflow/saved_model.pb.h"

namespace distflow {

// True iff `dir` holds an export.meta.
bool IsSessionBundleDir(const std::string& dir);

// The bundle in `dir` as a SavedModel (see above). NotFound when there is no
// export.meta; InvalidArgument naming the file when it is not a
// MetaGraphDef or its serving_signatures do not parse.
absl::StatusOr<SavedModel> ReadSessionBundle(const std::string& dir);

// The checkpoint prefix of the bundle in `dir` ("DIR/export"), once its
// TensorFlow (V2) checkpoint is there. Unimplemented naming the files when
// the bundle holds only the older sharded V1 checkpoint (export-?????-of-?????),
// which distflow does not read; NotFound when it holds neither.
absl::StatusOr<std::string> SessionBundleCheckpoint(const std::string& dir);

}  // namespace distflow

#endif  // DISTFLOW_SAVED_MODEL_SESSION_BUNDLE_H_
