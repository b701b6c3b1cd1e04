// `distflow serve` as TensorFlow Serving's users run it: real processes on
// loopback ports, TF Serving's documented REST calls on the SavedModels
// TensorFlow wrote (../shared/saved_models), and the requests a stranger
// might send, each answered with TF Serving's error JSON and HTTP code.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/saved_model/loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/command_line.h"
#include "integration/http_get.h"
#include "integration/server_process.h"
#include "nlohmann/json.hpp"
#include "serving/half_plus_model.h"

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
  // Row format, the curl line of docs/serving.md.
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
  // What `curl -d` sends: a form's Content-Type, here with a body over
  // 8 KiB, which is still JSON to the REST API.
  json x = json::array(), y = json::array();
  for (int i = 0; i < 3000; ++i) {
    x.push_back(i);
    y.push_back(0.5 * i + 2);
  }
  HttpResponse form =
      HttpPost(port, "/v1/models/half_plus_two:predict", json({{"instances", x}}).dump(),
               "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_EQ(form.status, 200) << form.body.substr(0, 200);
  EXPECT_EQ(Body(form), json({{"predictions", y}}));
}

// The TF 0.12 session bundle TF Serving's docs once served: its generic
// signatures answer as serving_default's predict, its regression signature
// by name (the bundle feeds floats, not tf.Examples, to it).
TEST(ServeProcessTest, LegacySessionBundleIsServed) {
  auto serve = StartServe(
      {"--model_name", "legacy", "--model_base_path", kModels + "/legacy_half_plus_two"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  HttpResponse status = HttpGet(port, "/v1/models/legacy");
  EXPECT_EQ(Body(status)["model_version_status"][0]["version"], "123") << status.body;
  EXPECT_EQ(Post(port, "/v1/models/legacy:predict", R"({"instances": [1.0, 2.0, 5.0]})"),
            json::parse(R"({"predictions": [2.5, 3.0, 4.5]})"));
  EXPECT_EQ(
      Post(port, "/v1/models/legacy:predict", R"({"signature_name": "regress", "inputs": [10.0]})"),
      json::parse(R"({"outputs": [7.0]})"));
}

// The open files of process `pid`, or -1.
int OpenFilesOf(pid_t pid) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return ec ? -1 : n;
}

// 500 idle connections to the REST port hold at most the server's 16
// threads and 16 waiting slots (plus one its accept loop holds); the rest
// wait in the kernel's backlog. Once they close, predict answers again.
// (cpp-httplib's own pool accepted every one, a file each.)
TEST(ServeProcessTest, AFloodOfIdleConnectionsHoldsAFewFiles) {
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_cpu"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  const int before = OpenFilesOf(serve->pid());
  ASSERT_GT(before, 0);
  const std::vector<int> fds = OpenIdleConnections(port, 500);
  ASSERT_EQ(fds.size(), 500u);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_LE(OpenFilesOf(serve->pid()) - before, 16 + 16 + 1);
  for (int fd : fds) close(fd);
  json r = Post(port, "/v1/models/half_plus_two:predict", R"({"instances": [1.0, 2.0, 5.0]})");
  EXPECT_EQ(r["predictions"], json::parse("[2.5, 3.0, 4.5]"));
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
      {url, R"({"instances": [true]})", 400, "expected numbers for float32, got true"},
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
  // Random bytes, and random cuts of a good body: each a 4xx, never a crash.
  std::mt19937 rng(7);
  const std::string good = R"({"signature_name": "serving_default", "instances": [[1.5], [2, 3]]})";
  for (int i = 0; i < 300; ++i) {
    std::string junk;
    if (i % 2 == 0) {
      junk.resize(rng() % 200);
      for (char& ch : junk) ch = static_cast<char>(rng());
    } else {
      junk = good.substr(0, rng() % good.size());
      if (!junk.empty()) junk[rng() % junk.size()] = static_cast<char>(rng());
    }
    const int status = HttpPost(port, url, junk).status;
    EXPECT_TRUE(status >= 200 && status < 500) << status << " for " << junk;
  }
  EXPECT_EQ(HttpGet(port, "/v1/models/nope").status, 404);
  EXPECT_EQ(HttpGet(port, url).status, 404);  // :predict wants POST
  EXPECT_EQ(HttpRequest(port, "DELETE", url, "").status, 404);
  // Still serving.
  EXPECT_EQ(Post(port, url, R"({"instances": [1.0]})"), json::parse(R"({"predictions": [2.5]})"));
}

// Clients calling predict on x = 1 as fast as they can, counting what they
// get back, until stopped.
class PredictLoad {
 public:
  PredictLoad(int port, int clients) {
    for (int i = 0; i < clients; ++i) {
      threads_.emplace_back([this, port] {
        while (!stop_.load()) {
          HttpResponse r = HttpPost(port, "/v1/models/hp:predict", R"({"instances": [1.0]})");
          absl::MutexLock lock(&mu_);
          ++requests_;
          if (r.status != 200) {
            failures_.push_back(absl::StrCat(r.status, " ", r.body));
          } else {
            ++answers_[r.body];
          }
        }
      });
    }
  }
  ~PredictLoad() { Stop(); }
  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  int64_t Count(const std::string& body) {
    absl::MutexLock lock(&mu_);
    return answers_[body];
  }
  std::vector<std::string> failures() {
    absl::MutexLock lock(&mu_);
    return failures_;
  }
  std::map<std::string, int64_t> answers() {
    absl::MutexLock lock(&mu_);
    return answers_;
  }
  int64_t requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  int64_t requests_ = 0;
  std::map<std::string, int64_t> answers_;
  std::vector<std::string> failures_;
};

// Waits up to 60 s for `done`.
template <typename F>
bool WaitFor(F done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return true;
}

TEST(ServeProcessTest, NewVersionTakesOverUnderLoadWithoutAFailedRequest) {
  const std::string base = ::testing::TempDir() + "/serve_versions";
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  auto serve = StartServe(
      {"--model_name", "hp", "--model_base_path", base, "--file_system_poll_wait_seconds", "0.2"});
  ASSERT_NE(serve, nullptr);
  // Nothing to serve yet: status and predict say so (a health check fails).
  HttpResponse r = HttpGet(serve->port(), "/v1/models/hp");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(Body(r).value("error", ""), HasSubstr("model 'hp' has no versions yet (none under"));
  r = HttpPost(serve->port(), "/v1/models/hp:predict", R"({"instances": [1.0]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(Body(r).value("error", ""), HasSubstr("model 'hp' has no version available"));
  WriteHalfPlus(base + "/1", 2);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(serve->port(), "/v1/models/hp").status == 200; }));
  const std::string v1 = R"({"predictions":[2.5]})", v2 = R"({"predictions":[3.5]})";
  PredictLoad load(serve->port(), 4);
  ASSERT_TRUE(WaitFor([&] { return load.Count(v1) >= 20; }));
  WriteHalfPlus(base + "/2", 3);
  ASSERT_TRUE(WaitFor([&] { return load.Count(v2) >= 200; })) << load.requests();
  load.Stop();
  EXPECT_THAT(load.failures(), ::testing::IsEmpty());
  // Only the two versions answered: no request saw a half-loaded model.
  EXPECT_EQ(load.answers().size(), 2u);
  std::cerr << load.requests() << " requests during the swap, none failed\n";

  r = HttpGet(serve->port(), "/v1/models/hp");
  EXPECT_EQ(Body(r), json::parse(R"({"model_version_status": [
      {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}},
      {"version": "1", "state": "END", "status": {"error_code": "OK", "error_message": ""}}]})"))
      << r.body;
  EXPECT_EQ(
      HttpPost(serve->port(), "/v1/models/hp/versions/1:predict", R"({"instances": [1]})").status,
      404);
  std::filesystem::remove_all(base);
}

TEST(ServeProcessTest, ABadVersionLeavesTheServingOneInPlace) {
  const std::string base = ::testing::TempDir() + "/serve_bad_version";
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  WriteHalfPlus(base + "/1", 2);
  auto serve =
      StartServe({"--model_name", "hp", "--model_base_path", base,
                  "--file_system_poll_wait_seconds", "0.2", "--max_num_load_retries", "1"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  std::filesystem::create_directories(base + "/2.tmp");
  ASSERT_TRUE(WriteStringToFileAtomic(base + "/2.tmp/saved_model.pb", "not a SavedModel").ok());
  std::filesystem::rename(base + "/2.tmp", base + "/2");
  json status;
  ASSERT_TRUE(WaitFor([&] {
    status = Body(HttpGet(port, "/v1/models/hp/versions/2"));
    return status.contains("model_version_status") &&
           status["model_version_status"][0]["status"]["error_code"] != "OK";
  })) << status.dump();
  const json& v2 = status["model_version_status"][0];
  EXPECT_EQ(v2["state"], "END");
  EXPECT_EQ(v2["status"]["error_code"], "INVALID_ARGUMENT");
  EXPECT_THAT(v2["status"]["error_message"].get<std::string>(),
              HasSubstr(base + "/2/saved_model.pb is not a SavedModel"));
  // Version 1 still serves, the default requests and by number.
  EXPECT_EQ(Post(port, "/v1/models/hp:predict", R"({"instances": [1.0]})"),
            json::parse(R"({"predictions": [2.5]})"));
  EXPECT_EQ(Body(HttpGet(port, "/v1/models/hp/versions/1"))["model_version_status"][0]["state"],
            "AVAILABLE");
  const json e = Post(port, "/v1/models/hp/versions/2:predict", R"({"instances": [1.0]})", 404);
  EXPECT_THAT(e.value("error", ""), HasSubstr("version 2 is not available (END: "));
  std::filesystem::remove_all(base);
}

TEST(ServeProcessTest, ClassifyAndRegressOnTfExamples) {
  // TF1's half_plus_two in versions 123 and 124: the newest serves.
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_2_versions"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  EXPECT_EQ(Body(HttpGet(port, "/v1/models/half_plus_two"))["model_version_status"][0]["version"],
            "124");
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:predict", R"({"instances": [1.0, 2.0, 5.0]})"),
            json::parse(R"({"predictions": [2.5, 3.0, 4.5]})"));
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:classify",
                 R"({"signature_name": "classify_x_to_y", "examples": [{"x": 1.0}, {"x": 2.0}]})"),
            json::parse(R"({"results": [[["", 2.5]], [["", 3.0]]]})"));
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:regress",
                 R"({"signature_name": "regress_x_to_y", "examples": [{"x": 1.0}, {"x": 2.0}]})"),
            json::parse(R"({"results": [2.5, 3.0]})"));
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two/versions/124:regress",
                 R"({"signature_name": "regress_x_to_y2", "examples": [{"x": 1.0}, {"x": 2.0}]})"),
            json::parse(R"({"results": [3.5, 4.0]})"));
  // The context's features go into every example; an example's own win.
  EXPECT_EQ(Post(port, "/v1/models/half_plus_two:regress",
                 R"({"signature_name": "regress_x_to_y", "context": {"x": 4.0},
                     "examples": [{}, {"x": 2.0}]})"),
            json::parse(R"({"results": [4.0, 3.0]})"));

  struct Case {
    std::string path, body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {":regress", R"({"signature_name": "regress_x_to_y", "examples": [{"x": 1}]})",
       "feature 'x': holds int64 values but float32 was expected"},
      {":regress", R"({"signature_name": "regress_x_to_y", "examples": [{"y": 1.0}]})",
       "feature 'x': is required"},
      {":regress", R"({"signature_name": "regress_x_to_y", "examples": [{"x": [1.0, "a"]}]})",
       "example 0 feature 'x' mixes strings and numbers"},
      {":regress", R"({"signature_name": "regress_x_to_y", "examples": [{"x": [[1.0]]}]})",
       "values must be numbers, strings or"},
      {":regress", R"({"signature_name": "regress_x_to_y", "examples": 3})", "\"examples\""},
      {":regress", R"({"examples": [{"x": 1.0}]})",
       "signature 'serving_default' is not a regress signature"},
      {":classify", R"({"signature_name": "regress_x_to_y", "examples": [{"x": 1.0}]})",
       "is not a classify signature: its method_name is 'tensorflow/serving/regress'"},
  };
  for (const Case& c : cases) {
    HttpResponse r = HttpPost(port, "/v1/models/half_plus_two" + c.path, c.body);
    EXPECT_EQ(r.status, 400) << c.body << " -> " << r.body;
    EXPECT_THAT(Body(r).value("error", ""), HasSubstr(c.message)) << c.body;
  }
}

TEST(ServeProcessTest, HalfPlusThreeRegressesAsTensorFlowServingDoes) {
  // Its regress signature ("tensorflow/serving/regress") declares its input
  // as float, and the placeholder behind it is a scalar string, which
  // ParseExample reads as a batch. TensorFlow's C++ session does not hold
  // feeds to the placeholder's shape, and neither does a loaded SavedModel
  // here: TF Serving answers [3.5, 4.0], and so does distflow.
  auto serve = StartServe({"--model_name", "half_plus_three", "--model_base_path",
                           kModels + "/serving_half_plus_three"});
  ASSERT_NE(serve, nullptr);
  EXPECT_EQ(Post(serve->port(), "/v1/models/half_plus_three:regress",
                 R"({"signature_name": "tensorflow/serving/regress",
                     "examples": [{"x": 1.0}, {"x": 2.0}]})"),
            json::parse(R"({"results": [3.5, 4.0]})"));
}

TEST(ServeProcessTest, KerasCnnAnswersWhatItsSessionComputes) {
  const std::string base = ::testing::TempDir() + "/serve_cnn";
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  std::filesystem::create_directory_symlink(kModels + "/keras_mnist_cnn_bn", base + "/1");
  auto serve = StartServe({"--model_name", "cnn", "--model_base_path", base});
  ASSERT_NE(serve, nullptr);
  // Two 28x28x1 images: a ramp and its reverse.
  Tensor images(DT_FLOAT, TensorShape({2, 28, 28, 1}));
  json instances = json::array();
  for (int i = 0; i < 2; ++i) {
    json image = json::array();
    for (int y = 0; y < 28; ++y) {
      json row = json::array();
      for (int x = 0; x < 28; ++x) {
        const float v = static_cast<float>(i == 0 ? y * 28 + x : 783 - (y * 28 + x)) / 783.0f;
        images.flat<float>()[(i * 28 + y) * 28 + x] = v;
        row.push_back(json::array({v}));
      }
      image.push_back(row);
    }
    instances.push_back(image);
  }
  const json reply =
      Post(serve->port(), "/v1/models/cnn:predict", json({{"instances", instances}}).dump());
  ASSERT_TRUE(reply.contains("predictions")) << reply.dump();

  SavedModelBundle bundle;
  ASSERT_TRUE(LoadSavedModel(SessionOptions(), RunOptions(), base + "/1", {"serve"}, &bundle).ok());
  const SignatureDef& sig = bundle.meta_graph_def.signature_def().at("serving_default");
  std::vector<Tensor> out;
  ASSERT_TRUE(bundle.session
                  ->Run({{sig.inputs().at("conv2d_input").name(), images}},
                        {sig.outputs().at("dense_1").name()}, {}, &out)
                  .ok());
  ASSERT_EQ(reply["predictions"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(reply["predictions"][i].size(), 10u);
    for (int k = 0; k < 10; ++k) {
      EXPECT_FLOAT_EQ(reply["predictions"][i][k].get<float>(), out[0].flat<float>()[i * 10 + k]);
    }
  }
  // A wrong shape is refused, naming the signature's shape.
  const json e =
      Post(serve->port(), "/v1/models/cnn:predict", R"({"instances": [[1, 2, 3]]})", 400);
  EXPECT_THAT(e.value("error", ""),
              HasSubstr("input 'conv2d_input' has shape [1,3], the signature's is [?,28,28,1]"));
  std::filesystem::remove_all(base);
}

TEST(ServeProcessTest, ModelConfigFileServesSeveralModels) {
  const std::string config = ::testing::TempDir() + "/models.config";
  std::ofstream(config) << absl::StrCat(R"(
    model_config_list {
      config {
        name: "half_plus_two"
        base_path: ")",
                                        kModels, R"(/serving_half_plus_two_2_versions"
        model_platform: "tensorflow"
        model_version_policy { all {} }
        version_labels { key: "stable" value: 123 }
        version_labels { key: "canary" value: 124 }
      }
      config {
        name: "counter"
        base_path: ")",
                                        kModels, R"(/serving_counter"
      }
    })");
  auto serve = StartServe({"--model_config_file", config});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  const json status = Body(HttpGet(port, "/v1/models/half_plus_two"));
  ASSERT_EQ(status["model_version_status"].size(), 2u) << status.dump();
  for (const json& v : status["model_version_status"]) EXPECT_EQ(v["state"], "AVAILABLE");
  for (const std::string path :
       {"", "/versions/123", "/versions/124", "/labels/stable", "/labels/canary"}) {
    EXPECT_EQ(Post(port, "/v1/models/half_plus_two" + path + ":predict",
                   R"({"instances": [1.0, 2.0, 5.0]})"),
              json::parse(R"({"predictions": [2.5, 3.0, 4.5]})"))
        << path;
  }
  EXPECT_EQ(Body(HttpGet(
                port, "/v1/models/half_plus_two/labels/canary/metadata"))["model_spec"]["version"],
            "124");
  const json stable = Body(HttpGet(port, "/v1/models/half_plus_two/labels/stable"));
  ASSERT_EQ(stable["model_version_status"].size(), 1u) << stable.dump();
  EXPECT_EQ(stable["model_version_status"][0]["version"], "123");
  const json e =
      Post(port, "/v1/models/half_plus_two/labels/beta:predict", R"({"instances": [1]})", 404);
  EXPECT_THAT(e.value("error", ""), HasSubstr("model 'half_plus_two' has no version label 'beta'"));
  EXPECT_EQ(Post(port, "/v1/models/counter:predict",
                 R"({"signature_name": "incr_counter", "inputs": {}})"),
            json::parse(R"({"outputs": 1.0})"));
}

TEST(ServeProcessTest, BadFlagsAndConfigsAreErrorsBeforeListening) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  struct Case {
    std::string flags;
    std::string message;
  };
  const std::string hp = kModels + "/serving_half_plus_two_tf2";
  const std::vector<Case> cases = {
      {"", "give either --model_base_path (with --model_name) or --model_config_file"},
      {"--model_base_path /nonexistent/models",
       "model base path /nonexistent/models is not a directory"},
      {"--model_config_file " + write("syntax.config", "model_config_list { config { name: }"),
       "syntax.config is not a valid distflow.ModelServerConfig in text format: line 1"},
      {"--model_config_file " +
           write("unknown.config", "model_config_list { config { name: \"a\" path: \"/x\" } }"),
       "no field named \"path\""},
      {"--model_config_file " +
           write("twice.config",
                 absl::StrCat("model_config_list { config { name: \"a\" base_path: \"", hp,
                              "\" } config { name: \"a\" base_path: \"", hp, "\" } }")),
       "names model 'a' twice"},
      {"--model_config_file " +
           write("nobase.config", "model_config_list { config { name: \"a\" } }"),
       "model 'a' has no base_path"},
      {"--model_base_path " + hp + " --batching_parameters_file /x", "needs --enable_batching"},
      {"--model_base_path " + hp + " --enable_batching --batching_parameters_file " +
           write("batch.config", "max_batch_size { value: 0 }"),
       "max_batch_size must be positive, got 0"},
      {"--model_base_path " + hp + " --enable_batching --batching_parameters_file " +
           write("batch2.config", "pad_variable_length_inputs: true"),
       "no field named \"pad_variable_length_inputs\""},
      {"--model_base_path " + hp + " --rest_api_port 70000",
       "REST API port 70000 is not in [0, 65535]"},
      {"--model_base_path " + hp + " --rest_api_timeout_in_ms 0",
       "--rest_api_timeout_in_ms must be positive"},
  };
  for (const Case& c : cases) {
    const test::CommandOutput out =
        test::RunCommandLine(absl::StrCat(DISTFLOW_BINARY, " serve ", c.flags, " 2>&1"));
    EXPECT_EQ(out.exit_code, 1) << c.flags << ": " << out.out;
    EXPECT_THAT(out.out, HasSubstr(c.message)) << c.flags;
    EXPECT_THAT(out.out, ::testing::Not(HasSubstr("listening on"))) << c.flags;
  }
}

// The value of the sample `series` (its whole name and labels) on a
// Prometheus page; -1 when it is not there.
double Sample(const std::string& page, const std::string& series) {
  const size_t at = page.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + series.size() + 2));
}

TEST(ServeProcessTest, BatchingReturnsEachCallerItsOwnRowsAndMetricsCountIt) {
  const std::string params = ::testing::TempDir() + "/batching.config";
  std::ofstream(params) << "max_batch_size { value: 16 }\n"
                           "batch_timeout_micros { value: 20000 }\n"
                           "num_batch_threads { value: 1 }\n"
                           "max_enqueued_batches { value: 100 }\n";
  auto serve = StartServe({"--model_name", "half_plus_two", "--model_base_path",
                           kModels + "/serving_half_plus_two_2_versions", "--enable_batching",
                           "--batching_parameters_file", params, "--rest_api_num_threads", "16"});
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  constexpr int kCallers = 12, kCalls = 15;
  std::atomic<int> wrong{0}, failed{0};
  std::atomic<int64_t> rows_sent{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kCalls; ++r) {
        const int rows = 1 + (c + r) % 3;
        json x = json::array(), expected = json::array();
        for (int i = 0; i < rows; ++i) {
          const float v = static_cast<float>(c * 100 + r * 4 + i);
          x.push_back(v);
          expected.push_back(0.5f * v + 2);
        }
        HttpResponse reply =
            HttpPost(port, "/v1/models/half_plus_two:predict", json({{"instances", x}}).dump());
        if (reply.status != 200) {
          ++failed;
          continue;
        }
        rows_sent += rows;
        if (Body(reply) != json({{"predictions", expected}})) ++wrong;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);

  const std::string page = HttpGet(port, "/monitoring/prometheus/metrics").body;
  const std::string sig = R"({model="half_plus_two",signature="serving_default")";
  const double batches = Sample(page, "distflow_serving_batch_size_count" + sig + "}");
  EXPECT_EQ(Sample(page, "distflow_serving_batch_size_sum" + sig + "}"), rows_sent.load());
  EXPECT_GT(batches, 0);
  EXPECT_LT(batches, kCallers * kCalls) << "no two requests shared a batch";
  EXPECT_EQ(
      Sample(page, "distflow_serving_requests_total" + sig + R"(,method="predict",code="OK"})"),
      kCallers * kCalls);
  EXPECT_EQ(Sample(page, "distflow_serving_request_latency_seconds_count" + sig +
                             R"(,method="predict"})"),
            kCallers * kCalls);
  EXPECT_EQ(
      Sample(page, R"(distflow_serving_model_loads_total{model="half_plus_two",result="success"})"),
      1);
  EXPECT_EQ(
      Sample(page, R"(distflow_serving_model_versions{model="half_plus_two",state="AVAILABLE"})"),
      1);

  // A failed request counts as an error under the names it resolved.
  HttpPost(port, "/v1/models/half_plus_two:predict", R"({"instances": ["x"]})");
  HttpPost(port, "/v1/models/made_up:predict", R"({"instances": [1]})");
  const std::string after = HttpGet(port, "/monitoring/prometheus/metrics").body;
  EXPECT_EQ(Sample(after, "distflow_serving_request_errors_total" + sig + R"(,method="predict"})"),
            1);
  EXPECT_EQ(
      Sample(
          after,
          R"(distflow_serving_requests_total{model="",signature="",method="predict",code="NOT_FOUND"})"),
      1);
  EXPECT_EQ(after.find("made_up"), std::string::npos);  // a stranger's name adds no series

  // promtool (Debian's prometheus package) reads the page as Prometheus would.
  const std::string file = ::testing::TempDir() + "/serve_metrics.txt";
  std::ofstream(file) << after;
  EXPECT_EQ(std::system(("promtool check metrics < " + file).c_str()), 0) << after;
}

TEST(ServeProcessTest, TokenDeadlineAndPort) {
  const std::string token_file = ::testing::TempDir() + "/serve_token";
  std::ofstream(token_file) << "s3cret\n";
  const std::string params = ::testing::TempDir() + "/slow_batching.config";
  // A batch waits up to 10 s for company; the requests' deadline is 300 ms.
  std::ofstream(params) << "max_batch_size { value: 64 } batch_timeout_micros { value: 10000000 }";
  setenv("DISTFLOW_TOKEN_FILE", token_file.c_str(), 1);
  auto serve =
      StartServe({"--model_name", "half_plus_two", "--model_base_path",
                  kModels + "/serving_half_plus_two_2_versions", "--enable_batching",
                  "--batching_parameters_file", params, "--rest_api_timeout_in_ms", "300"});
  unsetenv("DISTFLOW_TOKEN_FILE");
  ASSERT_NE(serve, nullptr);
  const int port = serve->port();
  const std::string url = "/v1/models/half_plus_two:predict";
  const std::string body = R"({"instances": [1.0]})";

  HttpResponse r = HttpPost(port, url, body);
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(Body(r).value("error", ""), HasSubstr("Authorization: Bearer TOKEN"));
  EXPECT_EQ(HttpGet(port, "/monitoring/prometheus/metrics").status, 401);
  EXPECT_EQ(HttpPost(port, url, body, "Authorization: Bearer wrong\r\n").status, 401);
  const std::string auth = "Authorization: Bearer s3cret\r\n";
  EXPECT_EQ(HttpGet(port, "/v1/models/half_plus_two", auth).status, 200);

  // Batched (one row): the deadline ends the wait for a batch, not 10 s.
  r = HttpPost(port, url, body, auth);
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_THAT(Body(r).value("error", ""), HasSubstr("deadline passed while it waited for a batch"));
  // Not batchable (a scalar): straight to the session, within the deadline.
  r = HttpPost(port, url, R"({"inputs": 4.0})", auth);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json::parse(R"({"outputs": 4.0})"));

  // The port is held: a second server on it is an error, not a shared port.
  const test::CommandOutput second = test::RunCommandLine(
      absl::StrCat(DISTFLOW_BINARY, " serve --model_base_path ", kModels,
                   "/serving_half_plus_two_tf2 --rest_api_port ", port, " 2>&1"));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.out, HasSubstr(absl::StrCat("cannot bind the REST API to 127.0.0.1:", port)));
}

TEST(ServeProcessTest, AModelExportedByTrainIsServedAndClassifiesATestImage) {
  // The path docs/serving.md gives: distflow train --export-saved-model DIR/1, then
  // distflow serve --model_base_path DIR, then classify a test image.
  const std::string base = ::testing::TempDir() + "/serve_fashion";
  std::filesystem::remove_all(base);
  const test::CommandOutput train = test::RunCommandLine(
      absl::StrCat(DISTFLOW_BINARY, " train --model mlp --epochs 1 --train-limit 3200",
                   " --test-limit 500 --export-saved-model ", base, "/1 2>&1"));
  ASSERT_EQ(train.exit_code, 0) << train.out;
  auto serve = StartServe({"--model_name", "fashion", "--model_base_path", base});
  ASSERT_NE(serve, nullptr);

  // The first test image of Fashion-MNIST's IDX file, raw pixels.
  const test::CommandOutput pixels = test::RunCommandLine(
      "/usr/bin/python3 -c 'import gzip, json; print(json.dumps(list(gzip.open("
      "\"/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz\").read()[16:16 + 784])))'");
  ASSERT_EQ(pixels.exit_code, 0);
  json image = json::parse(pixels.out);
  for (json& v : image) v = v.get<double>() + 0.0;  // floats, so the feature is a float_list
  ASSERT_EQ(image.size(), 784u);

  const json classified = Post(
      serve->port(), "/v1/models/fashion:classify",
      json({{"signature_name", "classify"}, {"examples", json::array({json({{"image", image}})})}})
          .dump());
  const json predicted = Post(serve->port(), "/v1/models/fashion:predict",
                              json({{"instances", json::array({image})}}).dump());
  ASSERT_EQ(classified["results"].size(), 1u) << classified.dump();
  const json& pairs = classified["results"][0];
  ASSERT_EQ(pairs.size(), 10u);
  EXPECT_EQ(pairs[0][0], "T-shirt/top");
  EXPECT_EQ(pairs[9][0], "Ankle boot");
  // classify's scores are serving_default's probabilities, and the class
  // predict names is the one with the highest score.
  const json& probabilities = predicted["predictions"][0]["probabilities"];
  int best = 0;
  for (int k = 0; k < 10; ++k) {
    EXPECT_FLOAT_EQ(pairs[k][1].get<float>(), probabilities[k].get<float>());
    if (probabilities[k].get<float>() > probabilities[best].get<float>()) best = k;
  }
  EXPECT_EQ(predicted["predictions"][0]["classes"], best);
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace distflow
