// Trains a Fashion-MNIST classifier (model.h) in one process: the training
// images stream from the gzipped IDX files through a tf.data pipeline
// (FixedLengthRecordDatasetV2 for images and labels, zipped, shuffled with
// a buffer holding the whole training set, batched, prefetched), are decoded in the graph
// (DecodeRaw, standardized) and feed the model; the loss is the mean
// SparseSoftmaxCrossEntropyWithLogits, minimised by Adam at a rate that by
// default falls in a straight line to 0 over the epochs, so the weights the
// last epoch ends with have settled. After the last epoch the model is
// evaluated on the test images.
//
// With a checkpoint directory the trainer saves the model, Adam's state,
// the global step and the epoch count after every epoch, and a new run
// with the same directory resumes after the last saved epoch (a run whose
// epochs are all done only evaluates). Train is a blocking call; run one
// at a time per checkpoint directory.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINER_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "distflow/cc/scope.h"
#include "distflow/training/learning_rate.h"
#include "fashion_mnist/idx_files.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace fashion_mnist {

struct TrainOptions {
  std::string model = "mlp";
  int64_t epochs = 2;
  int64_t batch_size = 64;
  double learning_rate = 0.001;
  // "linear": the rate falls in a straight line to 0 over the epochs (by
  // the global step, so a resumed run goes on where it was); "cosine": it
  // falls to 0 along half a cosine; "none": it stays at learning_rate.
  // On a cluster each worker applies gradients of weights a few updates
  // old, and a constant rate leaves the last weights where the last
  // updates threw them: with 2 workers killed every 5 s, 2 epochs of the
  // MLP at a constant 0.001 ended between 0.843 and 0.870 test accuracy
  // (0.0005: 0.838 to 0.871); falling linearly, 0.001 ended between 0.871
  // and 0.875 over 8 runs.
  std::string learning_rate_decay = "linear";
  std::string data_dir = kDefaultFashionMnistDir;
  std::string checkpoint_dir;    // empty: no checkpoints
  int64_t train_limit = 0;       // use the first N training images (0: all)
  int64_t test_limit = 0;        // evaluate on the first N test images (0: all)
  int64_t seed = 1;              // weights and shuffling
  int64_t progress_every = 100;  // steps between progress reports
  // Called once, before the first step, when the run resumes from a
  // checkpoint: its prefix and the epochs it had done.
  std::function<void(const std::string& prefix, int64_t epoch)> on_resumed;
  // Called after each checkpoint is written and listed: its prefix and
  // global step, on the training thread (for a checkpoint written in the
  // background, when the trainer next looks, after the write ended).
  std::function<void(const std::string& prefix, int64_t step)> on_checkpoint;
  // After evaluation, export the trained model here as a SavedModel
  // (export.h), e.g. BASE/1; empty: no export. Must not exist yet.
  std::string export_saved_model;
};

// Reported every progress_every steps and at the end of each epoch, with
// figures over the steps since the previous report.
struct TrainProgress {
  int64_t epoch;  // 1-based
  int64_t step;   // global step
  double examples_per_second, loss, accuracy;
};

struct TrainResult {
  std::string model;
  int64_t epochs = 0;        // epochs done in total (restored ones included)
  int64_t steps = 0;         // the final global step
  int64_t start_epoch = 0;   // epochs already done when this run started
  double train_loss = 0;     // mean loss of this run's last epoch (0: none run)
  double test_accuracy = 0;  // fraction of test images classified right
  int64_t test_examples = 0;
  double seconds = 0;              // training time of this run (not evaluation)
  double examples_per_second = 0;  // training examples per second of this run
  std::string restored_from;       // checkpoint prefix, empty when fresh
  std::string exported_to;         // the SavedModel written, empty when none
};

// OK iff the options make sense (positive epochs, batch size, learning
// rate and progress interval; a known decay; limits >= 0); InvalidArgument
// naming the option otherwise.
absl::Status CheckTrainOptions(const TrainOptions& options);

// The training images one epoch passes over: all of `files`' or the
// first train_limit.
int64_t TrainExamples(const TrainOptions& options, const FashionMnistFiles& files);

// The learning rate for the Adam optimizer of the options' training on
// `files`, as learning_rate_decay says; a decaying one is computed from
// `state`'s global step, next to it.
LearningRate ScheduledLearningRate(const Scope& scope, const TrainOptions& options,
                                   const FashionMnistFiles& files, const TrainingState& state);

// Trains as the options say. Fails with the data set's error (idx_files.h),
// InvalidArgument for bad options or an unknown model, or the first error
// of a step, checkpoint save or restore; a non-finite loss is
// InvalidArgument naming the step.
absl::StatusOr<TrainResult> Train(const TrainOptions& options,
                                  const std::function<void(const TrainProgress&)>& on_progress);

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINER_H_
