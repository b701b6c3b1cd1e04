// `distflow serve` as TensorFlow Serving's users run it: real processes on
// loopback ports, TF Serving's documented REST calls on the SavedModels
// TensorFlow wrote (../shared/saved_models), and the requests a stranger
// might send, each answered with TF Serving's error JSON and HTTP code.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/http_get.h"
#include "integration/server_process.h"
#include "nlohmann/json.hpp"

namespace distflow {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

std::unique_ptr<ServerProcess> StartServe(std::vector<std::string> flags) {
  flags.insert(flags.begin(), {"serve", "--rest_api_port", "0"});
  return ServerProcess::StartCommand(flags, ::testing::TempDir() + "/serve_stderr.txt");
}

json Body(const HttpResponse& r) { return json::parse(r.body, nullptr, false); }

// POSTs `body` and returns the reply, expecting `status`.
json Post(int port, const std::string& path, const std::string& body, int status = 200) {
  HttpResponse r = HttpPost(port, path, body);
  EXPECT_EQ(r.status, status) << path << " " << body << " -> " << r.body;
  return Body(r);
}

TEST(ServeProcessTest, HalfPlusTwoPredictsAsTensorFlowServingDocuments) {
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_tf2"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  // Row format, the README's curl line.
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:predict", R"({"instances": [1.0, 2.0, 5.0]})"),
            json::parse(R"({"predictions": [2.5, 3.0, 4.5]})"));
  // Columnar, bare and named; a version in the path; named instances.
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:predict", R"({"inputs": [1.0, 2.0, 5.0]})"),
            json::parse(R"({"outputs": [2.5, 3.0, 4.5]})"));
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two/versions/123:predict",
                 R"({"signature_name": "serving_default", "inputs": {"x": [4]}})"),
            json::parse(R"({"outputs": [4.0]})"));
  EXPECT_EQ(
      Post(port, "/v1/models/half_plus_two:predict", R"({"instances": [{"x": 6}, {"x": -2}]})"),
      json::parse(R"({"predictions": [5.0, 1.0]})"));
}

TEST(ServeProcessTest, StatusAndMetadata) {
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_tf2"});
  ASSERT_NE(serve, nullptr);
  HttpResponse r = HttpGet(serve->port(), "/v1/models/half_plus_two");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json::parse(R"({"model_version_status": [{"version": "123",
      "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]})"));
  EXPECT_EQ(HttpGet(serve->port(), "/v1/models/half_plus_two/versions/123").status, 200);

  r = HttpGet(serve->port(), "/v1/models/half_plus_two/metadata");
  ASSERT_EQ(r.status, 200) << r.body;
  const json meta = Body(r);
  EXPECT_EQ(meta["model_spec"]["name"], "half_plus_two");
  EXPECT_EQ(meta["model_spec"]["version"], "123");
  const json& sig = meta["metadata"]["signature_def"]["signature_def"]["serving_default"];
  EXPECT_EQ(sig["method_name"], "tensorflow/serving/predict");
  EXPECT_EQ(sig["inputs"]["x"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(sig["inputs"]["x"]["name"], "serving_default_x:0");
  EXPECT_EQ(sig["outputs"]["y"]["dtype"], "DT_FLOAT");
}

TEST(ServeProcessTest, CounterKeepsItsStateAcrossRequests) {
  auto serve =
      StartServe({"--model_name", "counter", "--model_base_path", kModels + "/serving_counter"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  const std::string url = "/v1/models/counter:predict";
  auto call = [&](const std::string& signature, const std::string& inputs) {
    return Post(
        port, url,
        absl::StrCat(R"({"signature_name": ")", signature, R"(", "inputs": )", inputs, "}"));
  };
  EXPECT_EQ(call("get_counter", "{}"), json::parse(R"({"outputs": 0.0})"));
  EXPECT_EQ(call("incr_counter", "{}"), json::parse(R"({"outputs": 1.0})"));
  EXPECT_EQ(call("incr_counter", "{}"), json::parse(R"({"outputs": 2.0})"));
  EXPECT_EQ(call("incr_counter_by", R"({"delta": 3})"), json::parse(R"({"outputs": 5.0})"));
  EXPECT_EQ(call("get_counter", "{}"), json::parse(R"({"outputs": 5.0})"));
  EXPECT_EQ(call("reset_counter", "{}"), json::parse(R"({"outputs": 0.0})"));
  EXPECT_EQ(call("get_counter", "{}"), json::parse(R"({"outputs": 0.0})"));
  // A scalar has no rows for the row format: said so, not crashed.
  const json e = Post(port, url, R"({"signature_name": "get_counter", "instances": [{}]})", 400);
  EXPECT_THAT(e.value("error", ""), HasSubstr("output 'output' is a scalar"));
}

TEST(ServeProcessTest, BadRequestsGetClearErrors) {
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_tf2", "--rest_api_max_body_mb", "1"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  const std::string url = "/v1/models/half_plus_two:predict";
  struct Case {
    std::string path, body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {url, R"({"instances": [1.0, 2.0)", 400, "malformed JSON"},
      {url, R"([1, 2])", 400, "must be a JSON object"},
      {url, R"({"instances": [1.0, "a"]})", 400,
       "input 'x': expected numbers for float32, got \"a\""},
      {url, R"({"instances": [[1.0], [2.0]]})", 400, "has shape [2,1]"},
      {url, R"({"instances": [[1.0], 2.0]})", 400, "ragged"},
      {url, R"({"instances": [{"b64": "AAAA"}]})", 400, "expected numbers"},
      {url, R"({"instances": []})", 400, "empty"},
      {url, R"({"instances": 3})", 400, "must be a list"},
      {url, R"({"signature_name": 7, "instances": [1]})", 400, "'signature_name' must be a string"},
      {url, R"({"instances": [1], "inputs": [1]})", 400, "both"},
      {url, R"({"examples": [1]})", 400, "neither"},
      {url, R"({"inputs": {"y": [1]}})", 400, "input 'y' is not an input of the signature"},
      {url, std::string(100, '[') + std::string(100, ']'), 400, "nests"},
      {url, R"({"signature_name": "nope", "instances": [1]})", 404,
       "has no signature 'nope' (its signatures: "},
      {"/v1/models/nope:predict", R"({"instances": [1]})", 404, "model 'nope' is not served here"},
      {"/v1/models/half_plus_two/versions/9:predict", R"({"instances": [1]})", 404,
       "model 'half_plus_two' version 9 is not available"},
      {"/v1/models/half_plus_two/versions/x1:predict", "{}", 400, "not a version number"},
      {"/v1/models/half_plus_two:explode", "{}", 404, "Malformed request"},
      {"/v2/anything", "{}", 404, "Malformed request"},
      {url, std::string(2 << 20, ' '), 413, "larger than the limit of 1048576 bytes"},
  };
  for (const Case& c : cases) {
    HttpResponse r = HttpPost(port, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.body.substr(0, 60) << " -> " << r.body;
    EXPECT_THAT(Body(r).value("error", ""), HasSubstr(c.message)) << c.body.substr(0, 60);
  }
  EXPECT_EQ(HttpGet(port, "/v1/models/nope").status, 404);
  EXPECT_EQ(HttpGet(port, url).status, 404);  // :predict wants POST
  EXPECT_EQ(HttpRequest(port, "DELETE", url, "").status, 404);
  // Still serving.
  EXPECT_EQ(Post(port, url, R"({"instances": [1.0]})"), json::parse(R"({"predictions": [2.5]})"));
}

}  // namespace
}  // namespace distflow
