#include "distflow/common_runtime/timeline.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace distflow {
namespace {

// `s` as a JSON string literal.
std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace

std::string StepStatsToChromeTrace(const StepStats& step_stats) {
  std::vector<std::string> events;
  for (int pid = 0; pid < step_stats.dev_stats_size(); ++pid) {
    const DeviceStepStats& dev = step_stats.dev_stats(pid);
    events.push_back(absl::StrCat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                                  ",\"args\":{\"name\":", JsonString(dev.device()), "}}"));
    for (const NodeExecStats& n : dev.node_stats()) {
      const std::string label = n.timeline_label().empty() ? n.node_name() : n.timeline_label();
      events.push_back(absl::StrCat(
          "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":", JsonString(n.node_name()), ",\"pid\":", pid,
          ",\"tid\":", n.thread_id(), ",\"ts\":", n.all_start_micros(),
          ",\"dur\":", n.all_end_rel_micros(), ",\"args\":{\"name\":", JsonString(n.node_name()),
          ",\"op\":", JsonString(label), "}}"));
    }
  }
  return absl::StrCat("{\"traceEvents\":[", absl::StrJoin(events, ","), "]}");
}

}  // namespace distflow
