#include "fashion_mnist/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/dataset.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"
#include "distflow/training/adam.h"
#include "distflow/training/learning_rate.h"
#include "distflow/training/variable.h"
#include "fashion_mnist/export.h"
#include "fashion_mnist/model.h"
#include "fashion_mnist/pipeline.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace fashion_mnist {
namespace {

// One batch of a split's pipeline, decoded: standardized float images of
// [batch, 784] and int32 labels of [batch].
struct Batch {
  DatasetIterator iterator;
  Output images, labels;
};

Batch MakePipeline(const Scope& scope, const IdxSplit& split, int64_t limit, bool shuffle,
                   int64_t batch_size, int64_t seed) {
  Dataset d = Records(scope, split);
  if (limit > 0) d = d.Take(limit);
  if (shuffle) d = d.Shuffle(kShuffleBuffer, seed);
  Batch b;
  b.iterator = d.Batch(batch_size).Prefetch(kPrefetch).MakeIterator();
  if (!scope.ok()) return b;
  const DecodedBatch decoded = Decode(scope, b.iterator.next);
  b.images = decoded.images;
  b.labels = decoded.labels;
  return b;
}

// The graph of one training job.
struct Job {
  Scope root = Scope::NewRootScope();
  Batch train, test;
  Output loss, train_correct, test_correct;
  std::vector<Output> variable_values;  // the model's variables, for an export
  Operation train_op;
  std::unique_ptr<Classifier> model;
  std::unique_ptr<AdamOptimizer> adam;
  std::unique_ptr<TrainingState> state;
};

absl::Status BuildJob(const TrainOptions& o, const FashionMnistFiles& files, Job* job) {
  const Scope& root = job->root;
  DF_ASSIGN_OR_RETURN(job->model, MakeClassifier(root, o.model, o.seed));
  job->train = MakePipeline(root.NewSubScope("train_data"), files.train, o.train_limit, true,
                            o.batch_size, o.seed);
  job->test = MakePipeline(root.NewSubScope("test_data"), files.test, o.test_limit, false,
                           kEvalBatch, o.seed);
  DF_RETURN_IF_ERROR(root.status());

  const Scope train = root.NewSubScope("train");
  auto logits = job->model->Logits(train, job->train.images);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(train, logits, job->train.labels);
  job->loss = ops::Mean(train.WithOpName("loss"), xent.loss, {0});
  job->train_correct = CorrectCount(train, logits, job->train.labels);
  job->test_correct = CorrectCount(root.NewSubScope("eval"),
                                   job->model->Logits(root.NewSubScope("eval"), job->test.images),
                                   job->test.labels);

  for (const Variable& v : job->model->variables()) {
    job->variable_values.push_back(v.Read(root.NewSubScope("export")));
  }
  job->state = std::make_unique<TrainingState>(root);
  job->adam =
      std::make_unique<AdamOptimizer>(root, ScheduledLearningRate(root, o, files, *job->state));
  DF_ASSIGN_OR_RETURN(job->train_op, job->adam->Minimize(job->loss, job->model->variables(),
                                                         &job->state->global_step()));
  return job->state->Finish(root, job->model->variables(), *job->adam);
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

absl::Status CheckTrainOptions(const TrainOptions& o) {
  if (o.epochs < 1) return errors::InvalidArgument("epochs must be >= 1, got ", o.epochs);
  if (o.batch_size < 1) {
    return errors::InvalidArgument("batch size must be >= 1, got ", o.batch_size);
  }
  if (o.train_limit < 0 || o.test_limit < 0) {
    return errors::InvalidArgument("train and test limits must be >= 0");
  }
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    return errors::InvalidArgument("learning rate must be a positive number, got ",
                                   o.learning_rate);
  }
  if (o.learning_rate_decay != "linear" && o.learning_rate_decay != "cosine" &&
      o.learning_rate_decay != "none") {
    return errors::InvalidArgument(
        "learning rate decay must be 'linear', 'cosine' or 'none', got '", o.learning_rate_decay,
        "'");
  }
  if (o.progress_every < 1) {
    return errors::InvalidArgument("progress interval must be >= 1, got ", o.progress_every);
  }
  return absl::OkStatus();
}

int64_t TrainExamples(const TrainOptions& o, const FashionMnistFiles& files) {
  return o.train_limit > 0 ? std::min(o.train_limit, files.train.count) : files.train.count;
}

LearningRate ScheduledLearningRate(const Scope& scope, const TrainOptions& o,
                                   const FashionMnistFiles& files, const TrainingState& state) {
  if (o.learning_rate_decay == "none") return o.learning_rate;
  const int64_t steps_per_epoch = (TrainExamples(o, files) + o.batch_size - 1) / o.batch_size;
  const int64_t decay_steps = std::max<int64_t>(1, o.epochs * steps_per_epoch);
  // Computed next to the global step, from its value when a step reads it.
  const Variable& global_step = state.global_step();
  const Scope s = scope.NewSubScope("learning_rate").ColocateWith(global_step.handle());
  if (o.learning_rate_decay == "cosine") {
    return CosineDecay(s, global_step.Read(s), o.learning_rate, decay_steps);
  }
  return PolynomialDecay(s, global_step.Read(s), o.learning_rate, decay_steps, 0.0);
}

absl::StatusOr<TrainResult> Train(const TrainOptions& o,
                                  const std::function<void(const TrainProgress&)>& on_progress) {
  DF_RETURN_IF_ERROR(CheckTrainOptions(o));
  DF_RETURN_IF_ERROR(CheckExportDir(o.export_saved_model));
  DF_ASSIGN_OR_RETURN(FashionMnistFiles files, OpenFashionMnist(o.data_dir));
  Job job;
  DF_RETURN_IF_ERROR(BuildJob(o, files, &job));
  ClientSession session(job.root);
  DF_RETURN_IF_ERROR(session.status());

  TrainResult result;
  result.model = o.model;
  std::vector<Tensor> out;
  DF_ASSIGN_OR_RETURN(TrainingState::Start from,
                      job.state->RestoreOrInitialize(session, o.checkpoint_dir));
  result.restored_from = from.restored_from;
  result.start_epoch = from.epoch;
  if (!from.restored_from.empty() && o.on_resumed) o.on_resumed(from.restored_from, from.epoch);
  int64_t step = from.step;

  int64_t examples = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = result.start_epoch; epoch < o.epochs; ++epoch) {
    DF_RETURN_IF_ERROR(session.Run({}, {}, {job.train.iterator.initializer}, nullptr));
    double epoch_loss = 0, window_loss = 0, window_correct = 0;
    int64_t epoch_steps = 0, window_steps = 0, window_examples = 0;
    auto window_start = std::chrono::steady_clock::now();
    auto report = [&] {
      if (window_steps == 0) return;
      on_progress(
          TrainProgress{epoch + 1, step,
                        window_examples / Seconds(std::chrono::steady_clock::now() - window_start),
                        window_loss / window_steps, window_correct / window_examples});
      window_loss = window_correct = 0;
      window_steps = window_examples = 0;
      window_start = std::chrono::steady_clock::now();
    };
    for (;;) {
      absl::Status s =
          session.Run({}, {job.loss, job.train_correct, job.train.labels}, {job.train_op}, &out);
      if (s.code() == absl::StatusCode::kOutOfRange) break;
      DF_RETURN_IF_ERROR(s);
      const double loss = out[0].scalar<float>();
      ++step;
      if (!std::isfinite(loss)) {
        return errors::InvalidArgument("the loss became ", loss, " at step ", step,
                                       " (training diverged; try a lower learning rate)");
      }
      const int64_t n = out[2].NumElements();
      epoch_loss += loss;
      ++epoch_steps;
      window_loss += loss;
      window_correct += out[1].scalar<float>();
      ++window_steps;
      window_examples += n;
      examples += n;
      if (step % o.progress_every == 0) report();
    }
    report();
    result.train_loss = epoch_steps > 0 ? epoch_loss / epoch_steps : 0;
    DF_RETURN_IF_ERROR(job.state->SetEpochsDone(session, epoch + 1));
    if (!o.checkpoint_dir.empty()) {
      DF_ASSIGN_OR_RETURN(std::string prefix, job.state->Save(session, o.checkpoint_dir, step));
      if (o.on_checkpoint) o.on_checkpoint(prefix, step);
    }
  }
  result.seconds = Seconds(std::chrono::steady_clock::now() - start);
  result.examples_per_second = result.seconds > 0 ? examples / result.seconds : 0;
  result.steps = step;
  result.epochs = std::max(o.epochs, result.start_epoch);

  DF_RETURN_IF_ERROR(session.Run({}, {}, {job.test.iterator.initializer}, nullptr));
  double correct = 0;
  for (;;) {
    absl::Status s = session.Run({job.test_correct, job.test.labels}, &out);
    if (s.code() == absl::StatusCode::kOutOfRange) break;
    DF_RETURN_IF_ERROR(s);
    correct += out[0].scalar<float>();
    result.test_examples += out[1].NumElements();
  }
  result.test_accuracy = result.test_examples > 0 ? correct / result.test_examples : 0;
  if (!o.export_saved_model.empty()) {
    DF_RETURN_IF_ERROR(session.Run(job.variable_values, &out));
    DF_RETURN_IF_ERROR(ExportClassifier(o.model, out, o.export_saved_model));
    result.exported_to = o.export_saved_model;
  }
  return result;
}

}  // namespace fashion_mnist
}  // namespace distflow
