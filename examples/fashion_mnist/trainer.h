// Trains a Fashion-MNIST classifier (model.h) in one process: the training
// images stream from the gzipped IDX files through a tf.data pipeline
// (FixedLengthRecordDatasetV2 for images and labels, zipped, shuffled with
// a buffer holding the whole training set, batched, prefetched), are decoded in the graph
// (DecodeRaw, standardized) and feed the model; the loss is the mean
// SparseSoftmaxCrossEntropyWithLogits, minimised by Adam. After the last
// epoch the model is evaluated on the test images.
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
#include "fashion_mnist/idx_files.h"

namespace distflow {
namespace fashion_mnist {

struct TrainOptions {
  std::string model = "mlp";
  int64_t epochs = 2;
  int64_t batch_size = 64;
  double learning_rate = 0.001;
  std::string data_dir = kDefaultFashionMnistDir;
  std::string checkpoint_dir;    // empty: no checkpoints
  int64_t train_limit = 0;       // use the first N training images (0: all)
  int64_t test_limit = 0;        // evaluate on the first N test images (0: all)
  int64_t seed = 1;              // weights and shuffling
  int64_t progress_every = 100;  // steps between progress reports
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
};

// OK iff the options make sense (positive epochs, batch size, learning
// rate and progress interval; limits >= 0); InvalidArgument naming the
// option otherwise.
absl::Status CheckTrainOptions(const TrainOptions& options);

// Trains as the options say. Fails with the data set's error (idx_files.h),
// InvalidArgument for bad options or an unknown model, or the first error
// of a step, checkpoint save or restore; a non-finite loss is
// InvalidArgument naming the step.
absl::StatusOr<TrainResult> Train(const TrainOptions& options,
                                  const std::function<void(const TrainProgress&)>& on_progress);

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINER_H_
