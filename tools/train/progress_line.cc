#include "train/progress_line.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace distflow {
namespace {

constexpr int kBarWidth = 30;

std::string Seconds(double s) {
  if (s < 0) return "?";
  if (s < 60) return absl::StrFormat("%.1f s", s);
  const int64_t m = static_cast<int64_t>(s / 60);
  return absl::StrFormat("%d min %d s", m, static_cast<int64_t>(s) - 60 * m);
}

}  // namespace

ProgressLine::ProgressLine(std::ostream& out, bool terminal, int64_t epochs,
                           int64_t steps_per_epoch)
    : out_(out),
      terminal_(terminal),
      epochs_(std::max<int64_t>(1, epochs)),
      steps_per_epoch_(std::max<int64_t>(1, steps_per_epoch)) {}

void ProgressLine::Resumed(const std::string& prefix, int64_t epoch) {
  Break();
  start_step_ = epoch * steps_per_epoch_;
  last_step_ = start_step_;
  out_ << "resumed from " << prefix << " after epoch " << epoch << std::endl;
}

std::string ProgressLine::Format(const fashion_mnist::TrainProgress& p, const std::string& extra) {
  // The loss's running mean over the epoch, each report weighted by its steps.
  if (p.epoch != mean_epoch_) {
    mean_epoch_ = p.epoch;
    loss_sum_ = 0;
    loss_steps_ = 0;
    if (last_step_ < 0 || last_step_ < (p.epoch - 1) * steps_per_epoch_) {
      last_step_ = (p.epoch - 1) * steps_per_epoch_;
    }
  }
  const int64_t window = std::max<int64_t>(1, p.step - std::max<int64_t>(last_step_, 0));
  last_step_ = p.step;
  loss_sum_ += p.loss * static_cast<double>(window);
  loss_steps_ += window;

  const int64_t in_epoch =
      std::clamp<int64_t>(p.step - (p.epoch - 1) * steps_per_epoch_, 0, steps_per_epoch_);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t done = p.step - start_step_;
  const int64_t left = std::max<int64_t>(0, epochs_ * steps_per_epoch_ - p.step);
  const double eta =
      done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(left) : -1;
  std::string line = absl::StrFormat(
      "epoch %d/%d step %d/%d: %.0f examples/s, loss %.4f, accuracy %.4f, mean loss %.4f, "
      "elapsed %s, ETA %s",
      p.epoch, epochs_, in_epoch, steps_per_epoch_, p.examples_per_second, p.loss, p.accuracy,
      loss_sum_ / static_cast<double>(loss_steps_), Seconds(elapsed), Seconds(eta));
  if (!extra.empty()) absl::StrAppend(&line, ", ", extra);
  return line;
}

void ProgressLine::Update(const fashion_mnist::TrainProgress& p, const std::string& extra) {
  const std::string text = Format(p, extra);
  if (!terminal_) {
    out_ << text << std::endl;
    return;
  }
  const int64_t in_epoch =
      std::clamp<int64_t>(p.step - (p.epoch - 1) * steps_per_epoch_, 0, steps_per_epoch_);
  const int filled = static_cast<int>(kBarWidth * in_epoch / steps_per_epoch_);
  std::string bar(static_cast<size_t>(kBarWidth), '.');
  std::fill(bar.begin(), bar.begin() + filled, '=');
  if (filled < kBarWidth && filled > 0) bar[static_cast<size_t>(filled)] = '>';
  // "\r" back to the start, "\x1b[K" clears what a longer line left.
  out_ << "\r[" << bar << "] " << text << "\x1b[K" << std::flush;
  open_ = true;
  if (in_epoch == steps_per_epoch_) Break();
}

void ProgressLine::Break() {
  if (!open_) return;
  out_ << std::endl;
  open_ = false;
}

}  // namespace distflow
