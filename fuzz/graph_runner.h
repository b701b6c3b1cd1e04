// What the GraphDef fuzz targets do with a parsed graph: import it into a
// DirectSession and run it under the fuzz caps (fuzz_limits.h) — every
// Placeholder fed a small tensor of its dtype and shape, every node as a
// target once, then a few single fetches — each run with a short timeout.
// Errors are the expected outcome for most inputs and are ignored; a crash,
// sanitizer report or hang is what the fuzzer is looking for.
// Not thread-safe (one input at a time).
#ifndef DISTFLOW_FUZZ_GRAPH_RUNNER_H_
#define DISTFLOW_FUZZ_GRAPH_RUNNER_H_

#include "distflow/graph.pb.h"

namespace distflow {
namespace fuzz {

void ImportAndRun(const GraphDef& graph_def);

}  // namespace fuzz
}  // namespace distflow

#endif  // DISTFLOW_FUZZ_GRAPH_RUNNER_H_
