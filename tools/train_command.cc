#include "train_command.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "distflow/core/status.h"
#include "nlohmann/json.hpp"

namespace distflow {

void AddTrainFlags(CLI::App* app, TrainFlags* flags) {
  fashion_mnist::TrainOptions& o = flags->options;
  app->add_option("--model", o.model, "mlp or cnn")->capture_default_str();
  app->add_option("--epochs", o.epochs, "passes over the training images")->capture_default_str();
  app->add_option("--batch-size", o.batch_size, "examples per step")->capture_default_str();
  app->add_option("--learning-rate", o.learning_rate, "Adam's learning rate")
      ->capture_default_str();
  app->add_option("--data-dir", o.data_dir, "directory of the four Fashion-MNIST .gz IDX files")
      ->capture_default_str();
  app->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "save after every epoch here; resume from the latest checkpoint");
  app->add_option("--train-limit", o.train_limit, "train on the first N images only (0: all)")
      ->capture_default_str();
  app->add_option("--test-limit", o.test_limit, "evaluate on the first N test images (0: all)")
      ->capture_default_str();
  app->add_option("--seed", o.seed, "seed of the initial weights and the shuffle")
      ->capture_default_str();
  app->add_option("--progress-every", o.progress_every, "steps between progress lines")
      ->capture_default_str();
  app->add_option("--output", flags->output, "text or json")->capture_default_str();
}

absl::Status RunTrainCommand(const TrainFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  const bool json = flags.output == "json";
  std::ostream& progress_out = json ? err : out;
  auto on_progress = [&](const fashion_mnist::TrainProgress& p) {
    progress_out << absl::StrFormat("epoch %d step %d: %.0f examples/s, loss %.4f, accuracy %.4f",
                                    p.epoch, p.step, p.examples_per_second, p.loss, p.accuracy)
                 << std::endl;
  };
  absl::StatusOr<fashion_mnist::TrainResult> r = fashion_mnist::Train(flags.options, on_progress);
  if (!r.ok()) return r.status();
  if (!r->restored_from.empty()) {
    progress_out << "resumed from " << r->restored_from << " after epoch " << r->start_epoch
                 << std::endl;
  }
  if (json) {
    nlohmann::ordered_json j = {{"model", r->model},
                                {"epochs", r->epochs},
                                {"steps", r->steps},
                                {"train_loss", r->train_loss},
                                {"test_accuracy", r->test_accuracy},
                                {"seconds", r->seconds},
                                {"examples_per_second", r->examples_per_second}};
    out << j.dump() << std::endl;
  } else {
    out << absl::StrFormat(
               "%s: %d epochs, %d steps, train loss %.4f, test accuracy %.4f on %d images, "
               "%.1f s, %.0f examples/s",
               r->model, r->epochs, r->steps, r->train_loss, r->test_accuracy, r->test_examples,
               r->seconds, r->examples_per_second)
        << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace distflow
