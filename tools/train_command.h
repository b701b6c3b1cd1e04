// `distflow train`: trains a Fashion-MNIST classifier in this process
// (examples/fashion_mnist/trainer.h), printing a progress line every
// --progress-every steps and a summary. With --output json, stdout holds
// only the summary as one JSON line
//   {"model","epochs","steps","train_loss","test_accuracy","seconds",
//    "examples_per_second"}
// and progress goes to stderr. Thread-compatible: one call at a time.
#ifndef DISTFLOW_TOOLS_TRAIN_COMMAND_H_
#define DISTFLOW_TOOLS_TRAIN_COMMAND_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "fashion_mnist/trainer.h"

namespace distflow {

struct TrainFlags {
  fashion_mnist::TrainOptions options;
  std::string output = "text";  // "text" or "json"
};

// Adds train's flags to `app`.
void AddTrainFlags(CLI::App* app, TrainFlags* flags);

// Trains and reports. InvalidArgument for a bad --output; otherwise the
// trainer's errors.
absl::Status RunTrainCommand(const TrainFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_COMMAND_H_
