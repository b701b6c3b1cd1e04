// Converts the StepStats of a traced step into Chrome's trace event format
// (open the JSON in chrome://tracing or Perfetto):
//   {"traceEvents":[{"ph":"X","cat":"Op","name":node,"pid":device_index,
//                    "tid":thread_id,"ts":start_us,"dur":duration_us,
//                    "args":{"name":node,"op":label}}, ...]}
// Each device also gets a "process_name" metadata event ("ph":"M") naming it.
// Pure function; thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_TIMELINE_H_
#define DISTFLOW_COMMON_RUNTIME_TIMELINE_H_

#include <string>

#include "distflow/step_stats.pb.h"

namespace distflow {

std::string StepStatsToChromeTrace(const StepStats& step_stats);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_TIMELINE_H_
