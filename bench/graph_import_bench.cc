// The cost of importing a large GraphDef, per node: a graph of N nodes
// (one Const in eight, the rest AddV2 of the previous node and the latest
// Const, each with TensorFlow's usual attrs) is
//   1. imported into a Graph (ConvertGraphDefToGraph), and
//   2. given to a DirectSession and run once, fetching the last node
//      (import, rewrite, placement, partition, executor construction).
// For each phase it prints microseconds per node and heap bytes per node
// still held afterwards (glibc's mallinfo2), and for the session the peak
// resident memory per node (above what the process held before the
// session); next to them the GraphDef's own size per node, serialized and
// in memory (protobuf's SpaceUsedLong). Each phase of each N runs in a
// child process of its own, so peaks do not carry over. Usage:
//   graph_import_bench [N...]   (default 10000 100000 1000000)
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/direct_session.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace {

int64_t HeapBytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

int64_t PeakRssBytes() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void SetType(NodeDef* n, const char* attr) { (*n->mutable_attr())[attr].set_type(DT_FLOAT); }

GraphDef MakeGraph(int64_t n) {
  GraphDef g;
  std::string last_const;
  std::string prev;
  for (int64_t i = 0; i < n; ++i) {
    NodeDef* node = g.add_node();
    node->set_name(absl::StrCat("layer_", i / 64, "/node_", i));
    if (i % 8 == 0) {
      node->set_op("Const");
      SetType(node, "dtype");
      TensorToProto(Tensor::Scalar<float>(static_cast<float>(i)),
                    (*node->mutable_attr())["value"].mutable_tensor());
      last_const = node->name();
      if (prev.empty()) prev = node->name();
      continue;
    }
    node->set_op("AddV2");
    SetType(node, "T");
    node->add_input(prev);
    node->add_input(last_const);
    prev = node->name();
  }
  return g;
}

// Phase 1: the GraphDef's own size and ConvertGraphDefToGraph. Prints the
// first columns of the row.
int RunImport(int64_t n) {
  SetMaxGraphNodes(0);
  const GraphDef graph_def = MakeGraph(n);
  const double wire = static_cast<double>(graph_def.ByteSizeLong()) / n;
  const double in_memory = static_cast<double>(graph_def.SpaceUsedLong()) / n;
  const int64_t base = HeapBytes();
  const auto start = std::chrono::steady_clock::now();
  Graph graph;
  const absl::Status s = ConvertGraphDefToGraph({}, graph_def, &graph);
  const double us = Seconds(start) * 1e6 / n;
  const double bytes = static_cast<double>(HeapBytes() - base) / n;
  if (!s.ok()) {
    std::fprintf(stderr, "import failed: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%9lld %9.0f %10.0f %11.2f %12.0f", static_cast<long long>(n), wire, in_memory, us,
              bytes);
  std::fflush(stdout);
  return 0;
}

// Phase 2: a DirectSession imports, compiles and runs the graph. Prints the
// rest of the row.
int RunSession(int64_t n) {
  SetMaxGraphNodes(0);
  GraphDef graph_def = MakeGraph(n);
  const std::string fetch = graph_def.node(n - 1).name();
  const int64_t base = HeapBytes();
  const int64_t rss_base = PeakRssBytes();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Session>> session = NewDirectSession(SessionOptions());
  absl::Status s = session.status();
  if (s.ok()) s = (*session)->Create(graph_def);
  std::vector<Tensor> out;
  if (s.ok()) s = (*session)->Run({}, {fetch}, {}, &out);
  const double us = Seconds(start) * 1e6 / n;
  const double bytes = static_cast<double>(HeapBytes() - base) / n;
  const double peak = static_cast<double>(PeakRssBytes() - rss_base) / n;
  if (!s.ok()) {
    std::fprintf(stderr, "session failed: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf(" %12.2f %14.0f %14.0f\n", us, bytes, peak);
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    int64_t n;
    if (!absl::SimpleAtoi(argv[i], &n) || n < 1) {
      std::fprintf(stderr, "usage: %s [N...] (node counts >= 1)\n", argv[0]);
      return 2;
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  std::printf("%9s %9s %10s %11s %12s %12s %14s %14s\n", "nodes", "pb_B/node", "mem_B/node",
              "import_us", "import_B", "session_us", "session_B", "session_peak_B");
  std::fflush(stdout);
  for (int64_t n : sizes) {
    for (int (*phase)(int64_t) : {distflow::RunImport, distflow::RunSession}) {
      const pid_t child = fork();
      if (child == 0) _exit(phase(n));
      int status = 0;
      waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    }
  }
  return 0;
}
