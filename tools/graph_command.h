// `distflow graph show FILE`: what a GraphDef (.pb or .pbtxt) holds, so a
// newcomer can see what to feed and fetch without protoc --decode:
//   - its size (nodes, functions) and the ops it uses, with counts, those
//     distflow lacks marked;
//   - the devices its nodes ask for;
//   - its placeholders (candidate feeds) with dtype and shape;
//   - its sinks (nodes no other node reads: candidate fetches and targets)
//     with their outputs' dtypes where distflow knows the op.
// Thread-compatible.
#ifndef DISTFLOW_TOOLS_GRAPH_COMMAND_H_
#define DISTFLOW_TOOLS_GRAPH_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace distflow {

absl::Status ShowGraph(const std::string& path, std::ostream& out);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_GRAPH_COMMAND_H_
