// A text GraphDef (.pbtxt), parsed with the library's reader, imported into
// a DirectSession and run (graph_runner.h).
#include <cstdint>
#include <string>

#include "distflow/graph/graph_io.h"
#include "graph_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  distflow::GraphDef graph_def;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!distflow::ParseGraphDefText(text, &graph_def).ok()) return 0;
  distflow::fuzz::ImportAndRun(graph_def);
  return 0;
}
