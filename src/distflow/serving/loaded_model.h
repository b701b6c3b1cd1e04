// One version of one model, loaded and ready to serve: the SavedModel's
// session and signatures, and (with batching on) the batch scheduler its
// calls go through. Requests hold it by shared_ptr, so a version taken out
// of service is destroyed only after its last request has finished.
//
// RunSignature checks the call against the signature before anything runs:
// every input key must be the signature's and every input the signature has
// must be given; otherwise InvalidArgument naming the input. Dtypes and
// shapes are the graph's to check (its placeholders), as in TensorFlow
// Serving: exporters often record the shape of the example they traced, and
// some TF1 signatures declare a dtype their placeholder does not have. When
// the graph refuses a call, the error says which inputs differ from the
// shapes the signature records. Output keys must be the signature's
// (empty: all of them).
//
// Thread-safe: any number of RunSignature calls at once.
#ifndef DISTFLOW_SERVING_LOADED_MODEL_H_
#define DISTFLOW_SERVING_LOADED_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distflow/meta_graph.pb.h"
#include "distflow/saved_model/loader.h"
#include "distflow/serving/batch_scheduler.h"

namespace distflow {

// The signature a request names none of.
inline constexpr char kDefaultServingSignature[] = "serving_default";

struct LoadedModelOptions {
  // Batching off when unset.
  std::optional<BatchingOptions> batching;
  // Told the rows of every batched session call (with batching on); may be
  // empty.
  std::function<void(const std::string& model, const std::string& signature, int64_t rows)>
      batch_observer;
};

class LoadedModel {
 public:
  // Loads the SavedModel in `export_dir` (tag set {"serve"}). The loader's
  // errors, naming the directory.
  static absl::StatusOr<std::shared_ptr<LoadedModel>> Load(const std::string& name, int64_t version,
                                                           const std::string& export_dir,
                                                           const LoadedModelOptions& options);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const MetaGraphDef& meta_graph_def() const { return bundle_.meta_graph_def; }

  // The signature called `signature_name` ("" means serving_default).
  // NotFound naming it and listing the signatures there are.
  absl::StatusOr<const SignatureDef*> Signature(const std::string& signature_name) const;

  // Runs signature `signature_name` on `inputs` (input key -> value) and
  // returns the outputs `output_keys` (all, sorted by key, when empty; then
  // *output_keys is set to them) in that order. DeadlineExceeded after
  // `deadline`. Through the batch scheduler when batching is on and the
  // call can be batched.
  absl::Status RunSignature(const std::string& signature_name, const NamedTensors& inputs,
                            std::vector<std::string>* output_keys, absl::Time deadline,
                            std::vector<Tensor>* outputs);

 private:
  LoadedModel(std::string name, int64_t version) : name_(std::move(name)), version_(version) {}

  // One session call, no checks.
  absl::Status RunSession(const SignatureDef& signature, const NamedTensors& inputs,
                          const std::vector<std::string>& output_keys, absl::Time deadline,
                          std::vector<Tensor>* outputs);

  const std::string name_;
  const int64_t version_;
  SavedModelBundle bundle_;
  std::unique_ptr<BatchScheduler> batcher_;
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_LOADED_MODEL_H_
