// A binary GraphDef, imported into a DirectSession and run (graph_runner.h).
#include <cstdint>

#include "graph_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  distflow::GraphDef graph_def;
  if (!graph_def.ParseFromArray(data, static_cast<int>(size))) return 0;
  distflow::fuzz::ImportAndRun(graph_def);
  return 0;
}
