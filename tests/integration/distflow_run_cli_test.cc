// Runs the `distflow run` binary on small graphs and checks what it prints:
// JSON and text output, feeds from JSON and .npy files, several devices, a
// Chrome trace, and the error format on stderr with exit status 1.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "command_line.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: 2 }
          dim { size: 2 }
        }
      }
    }
  }
  node {
    name: "c"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape { dim { size: 2 } }
          float_val: 10
          float_val: 20
        }
      }
    }
  }
  node {
    name: "y"
    op: "AddV2"
    input: "x"
    input: "c"
    device: "/device:CPU:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "z"
    op: "Mul"
    input: "y"
    input: "y"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "n"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
  }
)pb";

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DistflowRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest runs the tests of a binary in parallel.
    dir_ = ::testing::TempDir() + "/cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    graph_ = dir_ + "/cli_graph.pbtxt";
    std::ofstream(graph_) << kGraph;
  }

  // Runs `<prefix>distflow <args>` (args are passed through the shell, so
  // quote them).
  Result Run(const std::string& args, const std::string& prefix = "") {
    const std::string err_path = dir_ + "/cli_stderr.txt";
    distflow::test::CommandOutput o = distflow::test::RunCommandLine(
        absl::StrCat(prefix, DISTFLOW_BINARY, " ", args, " 2>", err_path));
    return Result{o.exit_code, o.out, ReadAll(err_path)};
  }

  std::string dir_;
  std::string graph_;
};

TEST_F(DistflowRunTest, JsonOutputOnTwoDevices) {
  Result r = Run(absl::StrCat("run ", graph_, " --feed 'x=[[1,2],[3,4]]' --fetch z --fetch y:0",
                              " --devices 2 --output json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["fetches"].size(), 2u);
  const auto& z = j["fetches"][0];
  EXPECT_EQ(z["name"], "z");
  EXPECT_EQ(z["dtype"], "float32");
  EXPECT_EQ(z["shape"], nlohmann::json::array({2, 2}));
  EXPECT_EQ(z["values"], nlohmann::json::array({121.0, 484.0, 169.0, 576.0}));
  EXPECT_EQ(j["fetches"][1]["name"], "y:0");
  EXPECT_EQ(j["fetches"][1]["values"], nlohmann::json::array({11.0, 22.0, 13.0, 24.0}));
}

TEST_F(DistflowRunTest, OutputDirHoldsEachFetchAsNpy) {
  const std::string out = dir_ + "/fetched";
  Result r = Run(absl::StrCat("run ", graph_, " --feed 'x=[[1,2],[3,4]]' --fetch z --fetch y:0",
                              " --output-dir ", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out + "/z.npy"));
  EXPECT_TRUE(std::filesystem::exists(out + "/y_0.npy"));
  // The written file feeds back in.
  Result again = Run(absl::StrCat("run ", graph_, " --feed x=@", out, "/y_0.npy --fetch y"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "y float32 [2,2] [[21.0,42.0],[23.0,44.0]]\n");
}

// y asks for CPU:1; z, unplaced, goes to the client device (CPU:0), as in
// TensorFlow, and --log-device-placement says so.
TEST_F(DistflowRunTest, LogDevicePlacementNamesEachNodesDevice) {
  Result r = Run(absl::StrCat("run ", graph_, " --feed 'x=[[1,2],[3,4]]' --fetch z",
                              " --devices 2 --log-device-placement"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("y: (AddV2): /job:localhost/replica:0/task:0/device:CPU:1\n"));
  EXPECT_THAT(r.err, HasSubstr("z: (Mul): /job:localhost/replica:0/task:0/device:CPU:0\n"));
  EXPECT_THAT(r.err, HasSubstr("c: (Const): /job:localhost/replica:0/task:0/device:CPU:0\n"));
}

// examples/graphs/while_loop.pbtxt, a loop as TF1's tf.while_loop writes it.
TEST_F(DistflowRunTest, WhileLoopExample) {
  const std::string graph = std::string(DISTFLOW_SOURCE_DIR) + "/examples/graphs/while_loop.pbtxt";
  {
    Result r = Run(absl::StrCat("run ", graph, " --feed n=5 --feed x=1 --fetch while/Exit",
                                " --fetch while/Exit_1 --output json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fetches"][0]["values"], nlohmann::json::array({5}));
    EXPECT_EQ(j["fetches"][1]["values"], nlohmann::json::array({63.0}));
  }
  // Zero iterations: the initial values come out.
  Result r =
      Run(absl::StrCat("run ", graph, " --feed n=0 --feed x=3 --fetch while/Exit_1 --output json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fetches"][0]["values"], nlohmann::json::array({3.0}));
}

TEST_F(DistflowRunTest, BinaryGraphDef) {
  distflow::GraphDef def;
  ASSERT_TRUE(distflow::ParseGraphDefText(kGraph, &def).ok());
  const std::string pb = dir_ + "/cli_graph.pb";
  ASSERT_TRUE(distflow::WriteGraphDefToFile(pb, def, /*text=*/false).ok());
  Result r = Run(absl::StrCat("run ", pb, " --feed 'x=[[0,0],[0,0]]' --fetch y --output json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fetches"][0]["values"],
            nlohmann::json::array({10.0, 20.0, 10.0, 20.0}));
}

TEST_F(DistflowRunTest, TruncatedOrGarbageGraphFilesAreErrorsNotCrashes) {
  distflow::GraphDef def;
  ASSERT_TRUE(distflow::ParseGraphDefText(kGraph, &def).ok());
  std::string bytes;
  ASSERT_TRUE(def.SerializeToString(&bytes));
  const std::string args = " --feed 'x=[[0,0],[0,0]]' --fetch y";
  // Every cut of the binary graph: an error naming what is wrong, exit 1.
  for (size_t len : {size_t{1}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    const std::string pb = absl::StrCat(dir_, "/cut_", len, ".pb");
    std::ofstream(pb, std::ios::binary) << bytes.substr(0, len);
    Result r = Run(absl::StrCat("run ", pb, args));
    EXPECT_EQ(r.exit_code, 1) << len << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("error: InvalidArgument: ")) << len;
  }
  const std::string garbage = dir_ + "/garbage.pb";
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919 + 13) % 251);
  std::ofstream(garbage, std::ios::binary) << noise;
  Result r = Run(absl::StrCat("run ", garbage, args));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("garbage.pb"));
}

TEST_F(DistflowRunTest, TextOutputIsOneLinePerFetch) {
  Result r = Run(absl::StrCat("run ", graph_, " --feed 'n=[[1,2,3]]' --fetch n --fetch n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "n int64 [1,3] [[1,2,3]]\nn int64 [1,3] [[1,2,3]]\n");
}

TEST_F(DistflowRunTest, NpyFeedAndTrace) {
  // A version 1 .npy file holding float32 [[1, 2], [3, 4]].
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  npy += static_cast<char>(header.size() & 0xff);
  npy += static_cast<char>(header.size() >> 8);
  npy += header;
  const float values[] = {1, 2, 3, 4};
  npy.append(reinterpret_cast<const char*>(values), sizeof(values));
  const std::string npy_path = dir_ + "/cli_x.npy";
  std::ofstream(npy_path, std::ios::binary) << npy;
  const std::string trace_path = dir_ + "/cli_trace.json";
  Result r = Run(absl::StrCat("run ", graph_, " --feed x=@", npy_path,
                              " --fetch z --output json --devices 2 --trace ", trace_path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fetches"][0]["values"], nlohmann::json::array({121.0, 484.0, 169.0, 576.0}));
  nlohmann::json trace = nlohmann::json::parse(ReadAll(trace_path));
  bool saw_z = false;
  for (const auto& e : trace["traceEvents"]) saw_z |= e["ph"] == "X" && e["name"] == "z";
  EXPECT_TRUE(saw_z);
}

TEST_F(DistflowRunTest, ErrorsGoToStderrWithTheCode) {
  Result ragged = Run(absl::StrCat("run ", graph_, " --feed 'x=[[1,2],[3]]' --fetch y"));
  EXPECT_EQ(ragged.exit_code, 1);
  EXPECT_TRUE(ragged.out.empty());
  EXPECT_THAT(ragged.err, StartsWith("error: InvalidArgument: feed 'x'"));

  Result fetch = Run(absl::StrCat("run ", graph_, " --fetch nope"));
  EXPECT_EQ(fetch.exit_code, 1);
  EXPECT_THAT(fetch.err, StartsWith("error: InvalidArgument: "));
  EXPECT_THAT(fetch.err, HasSubstr("nope"));

  Result missing = Run("run /nonexistent/graph.pbtxt --fetch y");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, StartsWith("error: NotFound: "));

  Result npy = Run(absl::StrCat("run ", graph_, " --feed x=@", dir_, "/missing.npy --fetch y"));
  EXPECT_EQ(npy.exit_code, 1);
  EXPECT_THAT(npy.err, HasSubstr("missing.npy"));

  Result type = Run(absl::StrCat("run ", graph_, " --feed n=1.5 --fetch n"));
  EXPECT_EQ(type.exit_code, 1);
  EXPECT_THAT(type.err, HasSubstr("feed 'n'"));
}

TEST_F(DistflowRunTest, ServerLimitFlagsAreChecked) {
  const std::string server = "server --cluster worker=127.0.0.1:0 --job worker";
  Result nodes = Run(absl::StrCat(server, " --max-graph-nodes 0"));
  EXPECT_EQ(nodes.exit_code, 1);
  EXPECT_THAT(nodes.err, HasSubstr("--max-graph-nodes must be >= 1, got 0"));
  Result request = Run(absl::StrCat(server, " --max-request-mb 2048"));
  EXPECT_EQ(request.exit_code, 1);
  EXPECT_THAT(request.err, HasSubstr("--max-request-mb must be between 1 and 2047, got 2048"));
}

// A graph with the values JSON cannot spell: non-finite floats and a
// string that is not UTF-8 (bytes a, 0xff, b, backslash, c).
constexpr char kOddValuesGraph[] = R"pb(
  node {
    name: "f"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape { dim { size: 4 } }
          float_val: nan
          float_val: inf
          float_val: -inf
          float_val: 1.5
        }
      }
    }
  }
  node {
    name: "s"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_STRING }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_STRING
          tensor_shape { dim { size: 2 } }
          string_val: "a\377b\\c"
          string_val: "caf\303\251"
        }
      }
    }
  }
)pb";

TEST_F(DistflowRunTest, NonFiniteFloatsAndNonUtf8StringsPrint) {
  const std::string graph = dir_ + "/odd.pbtxt";
  std::ofstream(graph) << kOddValuesGraph;
  Result json = Run(absl::StrCat("run ", graph, " --fetch f --fetch s --output json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  const auto& f = j["fetches"][0]["values"];
  EXPECT_EQ(f[0], "NaN");
  EXPECT_EQ(f[1], "Infinity");
  EXPECT_EQ(f[2], "-Infinity");
  EXPECT_EQ(f[3], 1.5);
  const auto& s = j["fetches"][1]["values"];
  // Invalid bytes as \xNN and the backslash doubled; valid UTF-8 unchanged.
  EXPECT_EQ(s[0], "a\\xffb\\\\c");
  EXPECT_EQ(s[1], "caf\xc3\xa9");

  Result text = Run(absl::StrCat("run ", graph, " --fetch f --fetch s"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("f float32 [4] [nan,inf,-inf,1.5]\n"));
  EXPECT_THAT(text.out, HasSubstr(R"(s string [2] ["a\\xffb\\\\c","café"])"));
}

TEST_F(DistflowRunTest, DeeplyNestedFeedIsAnError) {
  const int depth = 50000;
  const std::string value = std::string(depth, '[') + "1" + std::string(depth, ']');
  Result r = Run(absl::StrCat("run ", graph_, " --feed 'x=", value, "' --fetch y"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("error: InvalidArgument: feed 'x': value nests more than 254"));
}

TEST_F(DistflowRunTest, FlagsOutOfRangeAreErrors) {
  Result devices = Run(absl::StrCat("run ", graph_, " --devices 100000000 --fetch c"));
  EXPECT_EQ(devices.exit_code, 1);
  EXPECT_THAT(devices.err,
              StartsWith("error: InvalidArgument: --devices must be between 1 and 4096, got "
                         "100000000"));
  Result timeout = Run(absl::StrCat("run ", graph_, " --timeout -1 --fetch c"));
  EXPECT_EQ(timeout.exit_code, 1);
  EXPECT_THAT(timeout.err, HasSubstr("--timeout must be between 0"));
  Result server = Run("server --cluster ps=127.0.0.1:0 --job ps --devices 100000000");
  EXPECT_EQ(server.exit_code, 1);
  EXPECT_THAT(server.err, HasSubstr("--devices must be between 1 and 4096"));
}

constexpr char kBlockingGraph[] = R"pb(
  node {
    name: "q"
    op: "FIFOQueueV2"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "dequeue"
    op: "QueueDequeueV2"
    input: "q"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
)pb";

TEST_F(DistflowRunTest, TimeoutEndsAStuckStep) {
  const std::string graph = dir_ + "/blocking.pbtxt";
  std::ofstream(graph) << kBlockingGraph;
  Result r = Run(absl::StrCat("run ", graph, " --fetch dequeue --timeout 0.2"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("error: DeadlineExceeded: "));
  EXPECT_THAT(r.err, HasSubstr("--timeout 0.2"));
  EXPECT_TRUE(r.out.empty());
}

// A loop whose condition stays true for 2^31 iterations, run on the
// calling thread: --timeout ends it in the iteration where the deadline
// passes. `timeout 120` bounds the test should it not.
TEST_F(DistflowRunTest, TimeoutEndsAnEndlessLoop) {
  const std::string graph = std::string(DISTFLOW_SOURCE_DIR) + "/examples/graphs/while_loop.pbtxt";
  Result r = Run(absl::StrCat("run ", graph, " --feed n=2147483647 --feed x=1 --fetch while/Exit",
                              " --timeout 0.5"),
                 "timeout 120 ");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, StartsWith("error: DeadlineExceeded: "));
  EXPECT_THAT(r.err, HasSubstr("--timeout 0.5"));
  EXPECT_TRUE(r.out.empty());
}

TEST_F(DistflowRunTest, HugeNpyShapeIsAnError) {
  const std::string path = dir_ + "/huge.npy";
  std::string header =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }";
  header.append(118 - header.size(), ' ');
  header.push_back('\n');
  std::string data = "\x93NUMPY";
  data.push_back('\x01');
  data.push_back('\x00');
  data.push_back(static_cast<char>(header.size() & 0xff));
  data.push_back(static_cast<char>(header.size() >> 8));
  data += header;
  data += std::string(8, '\0');
  std::ofstream(path, std::ios::binary) << data;
  Result r = Run(absl::StrCat("run ", graph_, " --feed x=@", path, " --fetch y"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("error: InvalidArgument: npy file '"));
  EXPECT_THAT(r.err, HasSubstr("need more than 2^63 - 1 bytes of data"));
}

TEST_F(DistflowRunTest, VersionHelpAndTypos) {
  Result version = Run("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, StartsWith("distflow "));
  EXPECT_THAT(version.out, testing::MatchesRegex("distflow [0-9]+\\.[0-9]+\\.[0-9]+\n"));

  Result none = Run("");
  EXPECT_EQ(none.exit_code, 1);
  for (const char* sub : {"run", "server", "demo"}) EXPECT_THAT(none.err, HasSubstr(sub));
  EXPECT_THAT(none.err, HasSubstr("a subcommand is required"));

  Result typo = Run("rn x.pbtxt --fetch y");
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_THAT(typo.err, StartsWith("error: InvalidArgument: unknown subcommand 'rn'; did you "
                                   "mean 'run'?"));
  Result far = Run("frobnicate");
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_THAT(far.err, HasSubstr("unknown subcommand 'frobnicate' (subcommands: run, server, "
                                 "serve, demo"));

  Result help = Run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Infinity"));
}

TEST_F(DistflowRunTest, CtrlCExitsWith130) {
  const std::string graph = dir_ + "/blocking.pbtxt";
  std::ofstream(graph) << kBlockingGraph;
  const std::string ready = dir_ + "/started";
  // The step blocks on an empty queue; SIGINT ends the process with 130.
  // A background job of a non-interactive shell starts with SIGINT ignored,
  // so the signal is sent until the process (having installed its handler)
  // exits; --timeout bounds the test should it never do so.
  const std::string cmd = absl::StrCat(
      DISTFLOW_BINARY, " run ", graph, " --fetch dequeue --timeout 60 >/dev/null 2>&1 & pid=$!; ",
      "for i in $(seq 300); do kill -INT $pid 2>/dev/null || break; sleep 0.1; ",
      "grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null && break; ",
      "[ -e /proc/$pid ] || break; done; ", "wait $pid; echo $? >", ready);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(ReadAll(ready), "130\n");
}

}  // namespace
