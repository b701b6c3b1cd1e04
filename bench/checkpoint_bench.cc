// Checkpoint throughput: a model of 256 MiB of float32 (16 variables of
// 16 MiB, the shapes of large dense layers) saved with BundleWriter and
// restored with BundleReader in TensorFlow's format (index, data file,
// CRC-32C of every tensor), next to a plain write (fsync, rename: what a
// save must do to be durable and atomic) and a plain read of the same bytes
// into memory. Each figure is the best of REPEATS runs; the page cache is
// warm for reads, as it is when a job restores what it just saved.
//
// Then the checkpoint pause, through a Saver in a session, for the
// Fashion-MNIST MLP with Adam (what `distflow train` checkpoints) and for
// the 256 MiB model: the median of REPEATS synchronous saves (Saver::Save,
// which holds the chief back for all of it) next to the median snapshot
// (Saver::Snapshot, all the trainer waits for when it writes in the
// background) and the write that follows it off the training path
// (WriteSnapshot + Commit); plus the first update of every variable after a
// snapshot, which copies it (copy-on-write), next to the same update
// without one (for the MLP a training step). Usage:
//   checkpoint_bench [DIR [MIB [REPEATS]]]   (default /tmp, 256, 3)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/training/adam.h"
#include "distflow/training/saver.h"
#include "distflow/training/variable.h"
#include "fashion_mnist/model.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Medians of the phases of a save through `saver`, for the variables
// `vars` in `session`; `update` adds to every variable in place.
struct PauseFigures {
  double save = 0, snapshot = 0, write = 0, update = 0, update_after_snapshot = 0;
};

PauseFigures MeasurePause(const ClientSession& session, Saver* saver, const Operation& update,
                          const std::string& dir, int repeats) {
  std::vector<double> save, snapshot, write, plain_update, cow_update;
  int64_t step = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    Check(saver->Save(session, dir, ++step).status());
    save.push_back(Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    Check(session.Run({}, {}, {update}, nullptr));
    plain_update.push_back(Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    Check(saver->Snapshot(session));
    snapshot.push_back(Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    Check(session.Run({}, {}, {update}, nullptr));
    cow_update.push_back(Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::string> prefix = saver->WriteSnapshot(session, dir, ++step);
    Check(prefix.status());
    Check(saver->Commit(dir, *prefix));
    write.push_back(Seconds(t0));
  }
  return {Median(save), Median(snapshot), Median(write), Median(plain_update), Median(cow_update)};
}

void PrintPause(const char* model, double mib, const PauseFigures& f, int repeats) {
  std::printf("checkpoint pause for the %s (%.1f MiB of variables), median of %d\n", model, mib,
              repeats);
  std::printf("  synchronous save (Saver::Save)                 %9.2f ms\n", f.save * 1e3);
  std::printf("  snapshot: the pause (Saver::Snapshot)          %9.2f ms\n", f.snapshot * 1e3);
  std::printf("  background write (WriteSnapshot + Commit)      %9.2f ms\n", f.write * 1e3);
  std::printf("  update of every variable                       %9.2f ms\n", f.update * 1e3);
  std::printf("  the same update after a snapshot (copies)      %9.2f ms\n",
              f.update_after_snapshot * 1e3);
}

// The MLP that `distflow train` trains, with Adam's slots and the counters,
// checkpointed as the trainers do (fashion_mnist::TrainingState); its
// update is an Adam step on a constant batch.
void BenchMlp(const std::string& dir, int repeats) {
  const Scope root = Scope::NewRootScope();
  absl::StatusOr<std::unique_ptr<fashion_mnist::Classifier>> model =
      fashion_mnist::MakeClassifier(root, "mlp", 1);
  Check(model.status());
  fashion_mnist::TrainingState state(root);
  AdamOptimizer adam(root);
  const Output logits = (*model)->Logits(root, ops::Fill(root, {64, 784}, 0.5f));
  const Output loss = ops::Sum(root, ops::Square(root, logits), {0, 1});
  absl::StatusOr<Operation> update =
      adam.Minimize(loss, (*model)->variables(), &state.global_step());
  Check(update.status());
  Check(state.Finish(root, (*model)->variables(), adam));
  double bytes = 0;
  std::vector<distflow::Variable> all = (*model)->variables();
  all.insert(all.end(), adam.variables().begin(), adam.variables().end());
  for (const distflow::Variable& v : all) {
    TensorShape shape;
    if (v.shape().AsTensorShape(&shape)) bytes += shape.num_elements() * 4.0;
  }
  Check(root.status());
  ClientSession session(root);
  Check(state.RestoreOrInitialize(session, "").status());
  PrintPause("Fashion-MNIST MLP with Adam", bytes / (1 << 20),
             MeasurePause(session, state.saver(), *update, dir, repeats), repeats);
}

// `n` float32 variables of 16 MiB under a Saver.
void BenchLarge(const std::string& dir, int n, int repeats) {
  const Scope root = Scope::NewRootScope();
  std::vector<Saver::Variable> saved;
  std::vector<Operation> inits, updates;
  for (int i = 0; i < n; ++i) {
    const distflow::Variable v(root.WithOpName(absl::StrCat("layer_", i, "/kernel")),
                               ops::Fill(root, {2048, 2048}, 0.5f));
    saved.push_back({v.name(), v.handle(), DT_FLOAT, TensorShape({2048, 2048})});
    inits.push_back(v.initializer());
    updates.push_back(v.AssignAdd(root, ops::Fill(root, {2048, 2048}, 1.0f)));
  }
  Saver saver(root, saved, /*max_to_keep=*/2);
  const Operation update = ops::NoOp(root.WithControlDependencies(updates));
  Check(root.status());
  ClientSession session(root);
  Check(session.Run({}, {}, inits, nullptr));
  PrintPause(absl::StrCat(n * 16, " MiB model").c_str(), n * 16.0,
             MeasurePause(session, &saver, update, dir, repeats), repeats);
}

int Main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  int mib = 256, repeats = 3;
  if ((argc > 2 && !absl::SimpleAtoi(argv[2], &mib)) ||
      (argc > 3 && !absl::SimpleAtoi(argv[3], &repeats)) || mib < 16 || repeats < 1) {
    std::fprintf(stderr, "usage: checkpoint_bench [DIR [MIB >= 16 [REPEATS]]]\n");
    return 2;
  }
  const std::string work = absl::StrCat(dir, "/checkpoint_bench_", getpid());
  std::filesystem::create_directories(work);
  const int n = mib / 16;
  std::vector<Tensor> vars;
  for (int i = 0; i < n; ++i) {
    Tensor t(DT_FLOAT, TensorShape({2048, 2048}));
    for (size_t k = 0; k < static_cast<size_t>(t.NumElements()); ++k) {
      t.flat<float>()[k] = static_cast<float>((k * 2654435761u + i) % 1000) / 1000.0f;
    }
    vars.push_back(t);
  }
  const double bytes = static_cast<double>(n) * 16 * (1 << 20);
  double save = 1e9, restore = 1e9, write = 1e9, read = 1e9, crc = 1e9;
  const std::string prefix = work + "/model.ckpt";
  const std::string plain = work + "/plain.bin";
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    BundleWriter writer(prefix);
    for (int i = 0; i < n; ++i) Check(writer.Add(absl::StrCat("layer_", i, "/kernel"), vars[i]));
    Check(writer.Finish());
    save = std::min(save, Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
    Check(reader.status());
    std::vector<Tensor> restored;  // kept, as a restore keeps them: fresh pages both ways
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<Tensor> t = (*reader)->Read(absl::StrCat("layer_", i, "/kernel"), DT_FLOAT);
      Check(t.status());
      restored.push_back(*std::move(t));
    }
    restore = std::min(restore, Seconds(t0));
    restored.clear();

    t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> f = AtomicFileWriter::Create(plain);
    Check(f.status());
    for (const Tensor& t : vars) {
      Check(
          (*f)->Append(absl::string_view(static_cast<const char*>(t.raw_data()), t.TotalBytes())));
    }
    Check((*f)->Commit());
    write = std::min(write, Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> in = RandomAccessFile::Open(plain);
    Check(in.status());
    std::vector<Tensor> back;
    uint64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      Tensor t(DT_FLOAT, TensorShape({2048, 2048}));
      Check((*in)->Read(offset, t.TotalBytes(), static_cast<char*>(t.raw_data())));
      offset += t.TotalBytes();
      back.push_back(t);
    }
    read = std::min(read, Seconds(t0));

    t0 = std::chrono::steady_clock::now();
    uint32_t sum = 0;
    for (const Tensor& t : vars) {
      sum ^=
          crc32c::Value(absl::string_view(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
    }
    crc = std::min(crc, Seconds(t0));
    if (sum == 0x12345678) std::printf(" ");  // keeps the loop
  }
  const double mb = bytes / 1e6;
  std::printf("checkpoint of %d MiB (%d float32 variables of 16 MiB), best of %d, in %s\n", mib, n,
              repeats, work.c_str());
  std::printf("  save    (BundleWriter: data file + index)  %8.0f MB/s  (%.3f s)\n", mb / save,
              save);
  std::printf("  write   (plain file, fsync + rename)        %8.0f MB/s  (%.3f s)\n", mb / write,
              write);
  std::printf("  restore (BundleReader: every tensor, CRC)   %8.0f MB/s  (%.3f s)\n", mb / restore,
              restore);
  std::printf("  read    (plain file into tensors)           %8.0f MB/s  (%.3f s)\n", mb / read,
              read);
  std::printf("  crc32c  (of the same bytes in memory)       %8.0f MB/s\n", mb / crc);
  std::filesystem::remove_all(work);
  BenchMlp(work + "/mlp", repeats);
  BenchLarge(work + "/large", n, repeats);
  std::filesystem::remove_all(work);
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
