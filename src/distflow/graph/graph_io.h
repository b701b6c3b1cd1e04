// Reading and writing GraphDefs as files: binary (.pb) or text (.pbtxt).
#ifndef DISTFLOW_GRAPH_GRAPH_IO_H_
#define DISTFLOW_GRAPH_GRAPH_IO_H_

#include <string>

#include "absl/status/status.h"
#include "distflow/graph.pb.h"

namespace distflow {

// Text format when the name ends in .pbtxt/.txt/.pbtext, else binary; a
// binary parse failure falls back to text. InvalidArgument naming the file
// and the parse error (line and column for text) when neither parses.
absl::Status ReadGraphDefFromFile(const std::string& path, GraphDef* graph_def);
absl::Status ParseGraphDefText(const std::string& text, GraphDef* graph_def);

// Binary output is deterministic (maps sorted), so equal graphs give equal bytes.
std::string SerializeGraphDefDeterministic(const GraphDef& graph_def);
absl::Status WriteGraphDefToFile(const std::string& path, const GraphDef& graph_def, bool text);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_IO_H_
