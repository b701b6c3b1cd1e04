// Checkpoint throughput: a model of 256 MiB of float32 (16 variables of
// 16 MiB, the shapes of large dense layers) saved with BundleWriter and
// restored with BundleReader in TensorFlow's format (index, data file,
// CRC-32C of every tensor), next to a plain write (fsync, rename: what a
// save must do to be durable and atomic) and a plain read of the same bytes
// into memory. Each figure is the best of REPEATS runs; the page cache is
// warm for reads, as it is when a job restores what it just saved. Usage:
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
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"

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
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
