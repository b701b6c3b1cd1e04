// TensorFlow Serving's REST API over a ModelManager, independent of any HTTP
// library: one call takes a request's method, path and body and returns the
// reply. Paths, as TF Serving serves them:
//   GET  /v1/models/NAME[/versions/V | /labels/L]              version status
//   GET  /v1/models/NAME[/versions/V | /labels/L]/metadata     signature defs
//   POST /v1/models/NAME[/versions/V | /labels/L]:predict      (predict_json.h)
//   POST /v1/models/NAME[/versions/V | /labels/L]:classify     (example_json.h)
//   POST /v1/models/NAME[/versions/V | /labels/L]:regress
//   GET  /monitoring/prometheus/metrics                        (serving_metrics.h)
// Errors are {"error": "<message>"} with the HTTP code of their status code
// (InvalidArgument, FailedPrecondition, OutOfRange 400; NotFound 404;
// DeadlineExceeded 504; ResourceExhausted 429; Unavailable 503;
// Unimplemented 501; Unauthenticated 401; PermissionDenied 403; others 500).
// Every request is bounded by `timeout`; every request to a model is
// counted in the metrics.
//
// Thread-safe.
#ifndef DISTFLOW_SERVING_REST_API_H_
#define DISTFLOW_SERVING_REST_API_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distflow/serving/model_manager.h"
#include "distflow/serving/serving_metrics.h"

namespace distflow {

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// The HTTP status code TF Serving answers a status code with.
int HttpStatusFor(absl::StatusCode code);
// {"error": "<message>"} with that code.
HttpReply ErrorReply(const absl::Status& status);

inline constexpr char kMetricsPath[] = "/monitoring/prometheus/metrics";

class RestApi {
 public:
  // `models` and `metrics` must outlive this object.
  RestApi(ModelManager* models, ServingMetrics* metrics, absl::Duration timeout)
      : models_(models), metrics_(metrics), timeout_(timeout) {}

  HttpReply Handle(absl::string_view method, absl::string_view path, absl::string_view body) const;

 private:
  ModelManager* const models_;
  ServingMetrics* const metrics_;
  const absl::Duration timeout_;
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_REST_API_H_
