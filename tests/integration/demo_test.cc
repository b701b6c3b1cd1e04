// `distflow demo` as a user runs it: async and sync training on a local
// cluster converge to y = 2x + 10; a run whose workers are killed resumes
// from its last checkpoint; a corrupted checkpoint is refused; a frozen or
// killed task ends the demo with an error naming it, leaving no process.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/framework/tensor_bundle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::testing::HasSubstr;

struct Outcome {
  int exit_code = -1;
  std::string out, err;
  // The pids of the demo's tasks, from its "started ... (pid P)" lines.
  std::vector<pid_t> task_pids;
  std::chrono::steady_clock::duration signalled_to_exit{};
};

// Longer than any demo of these tests runs: past it the demo is killed and
// the test fails instead of hanging.
constexpr auto kDemoLimit = std::chrono::seconds(150);

// Runs `distflow demo ARGS`; `on_line` sees each stdout line as it comes and
// may return true to send `sig` right away to the demo's tasks whose name
// matches `tasks` (a regex; by default every worker).
Outcome RunDemo(const std::vector<std::string>& args,
                const std::function<bool(const std::string&)>& on_line = nullptr, int sig = SIGKILL,
                const std::string& tasks = R"(/job:worker/\S+)") {
  // Per test and per call: ctest runs these tests in parallel.
  static int calls = 0;
  const std::string err_path = ::testing::TempDir() + "/demo_stderr_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                               "_" + std::to_string(++calls) + ".txt";
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    FILE* e = std::fopen(err_path.c_str(), "w");
    dup2(fileno(e), STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv{const_cast<char*>(DISTFLOW_BINARY), const_cast<char*>("demo")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(DISTFLOW_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  absl::Notification exited;
  std::thread limit([&] {
    if (!exited.WaitForNotificationWithTimeout(absl::FromChrono(kDemoLimit))) kill(pid, SIGKILL);
  });
  Outcome o;
  FILE* f = fdopen(fds[0], "r");
  char buf[4096];
  bool signalled = false;
  std::chrono::steady_clock::time_point signalled_at;
  while (fgets(buf, sizeof(buf), f) != nullptr) {
    o.out += buf;
    if (!signalled && on_line && on_line(buf)) {
      signalled = true;
      signalled_at = std::chrono::steady_clock::now();
      // Task pids are in the demo's stderr: "started /job:worker/... (pid P)".
      std::ifstream err(err_path);
      std::string line;
      std::regex re("started " + tasks + R"( \(pid (\d+)\))");
      while (std::getline(err, line)) {
        std::smatch m;
        if (std::regex_search(line, m, re)) kill(std::stoi(m[1]), sig);
      }
    }
  }
  fclose(f);
  int status = 0;
  waitpid(pid, &status, 0);
  exited.Notify();
  limit.join();
  if (signalled) o.signalled_to_exit = std::chrono::steady_clock::now() - signalled_at;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  o.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  std::regex started(R"(started \S+ \(pid (\d+)\))");
  for (std::sregex_iterator it(o.err.begin(), o.err.end(), started), end; it != end; ++it) {
    o.task_pids.push_back(std::stoi((*it)[1]));
  }
  return o;
}

// True when `pid` is gone (or a zombie nobody reaped yet), within 5 s.
bool ProcessGone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// True a second after the demo says it starts training, when steps run.
bool Training(const std::string& line) {
  if (line.rfind("training ", 0) != 0) return false;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return true;
}

nlohmann::json LastJsonLine(const std::string& out) {
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipWhitespace());
  EXPECT_FALSE(lines.empty());
  return nlohmann::json::parse(lines.empty() ? "{}" : lines.back());
}

TEST(DemoTest, AsyncConverges) {
  Outcome o = RunDemo(
      {"--mode", "async", "--workers", "2", "--ps", "1", "--steps", "300", "--output", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j = LastJsonLine(o.out);
  EXPECT_EQ(j["mode"], "async");
  EXPECT_GE(j["steps"].get<int64_t>(), 300);
  EXPECT_NEAR(j["weight"].get<double>(), 2.0, 0.1) << o.out;
  EXPECT_NEAR(j["bias"].get<double>(), 10.0, 0.3) << o.out;
  EXPECT_GT(j["seconds"].get<double>(), 0.0);
  EXPECT_TRUE(j.contains("loss"));
}

TEST(DemoTest, SyncConvergesWithOneUpdatePerStep) {
  Outcome o = RunDemo({"--mode", "sync", "--workers", "2", "--ps", "1", "--steps", "200"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::smatch m;
  std::regex done(
      R"(done: (\d+) steps \((\d+) updates in this run\).*weight ([-0-9.]+).*bias ([-0-9.]+))");
  ASSERT_TRUE(std::regex_search(o.out, m, done)) << o.out;
  EXPECT_EQ(m[1], "200");
  EXPECT_EQ(m[2], "200");  // one aggregated update per global step
  EXPECT_NEAR(std::stod(m[3]), 2.0, 0.1) << o.out;
  EXPECT_NEAR(std::stod(m[4]), 10.0, 0.3) << o.out;
}

TEST(DemoTest, KilledRunResumesFromItsLastCheckpoint) {
  const std::string dir = ::testing::TempDir() + "/demo_resume";
  std::filesystem::remove_all(dir);
  // Kill the workers once training is past the first checkpoints.
  Outcome first = RunDemo({"--steps", "600", "--checkpoint-dir", dir, "--checkpoint-every", "50"},
                          [](const std::string& line) {
                            int64_t step = 0;
                            std::smatch m;
                            std::regex re(R"(^step (\d+))");
                            if (std::regex_search(line, m, re)) absl::SimpleAtoi(m[1].str(), &step);
                            return step >= 200;
                          });
  EXPECT_NE(first.exit_code, 0) << first.out;
  EXPECT_THAT(first.err, HasSubstr("error:"));
  EXPECT_THAT(first.err, HasSubstr("/job:worker"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/checkpoint"));
  // The step of the checkpoint the index names: the run must resume there.
  std::ifstream index(dir + "/checkpoint");
  std::string first_line;
  std::getline(index, first_line);
  std::smatch ck;
  ASSERT_TRUE(std::regex_search(first_line, ck, std::regex(R"(model\.ckpt-(\d+))"))) << first_line;
  const int64_t saved = std::stoll(ck[1]);
  EXPECT_GE(saved, 100);

  Outcome second = RunDemo({"--steps", "700", "--checkpoint-dir", dir, "--checkpoint-every", "50"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  std::smatch m;
  std::regex resumed(R"(resumed from \S+ at step (\d+))");
  ASSERT_TRUE(std::regex_search(second.out, m, resumed)) << second.out;
  // The checkpoint is named after the chief's step when it saved; in async
  // training the other worker may apply an update or two while the shards
  // are written, and those are in the checkpoint too (as in TensorFlow).
  const int64_t from = std::stoll(m[1]);
  EXPECT_GE(from, saved);
  EXPECT_LE(from, saved + 5);
  std::regex done(R"(done: (\d+) steps \((\d+) updates in this run\))");
  ASSERT_TRUE(std::regex_search(second.out, m, done)) << second.out;
  EXPECT_GE(std::stoll(m[1]), 700);
  EXPECT_EQ(std::stoll(m[1]) - from, std::stoll(m[2]));  // counted on from the checkpoint
}

TEST(DemoTest, CorruptedCheckpointIsRefused) {
  const std::string dir = ::testing::TempDir() + "/demo_corrupt";
  std::filesystem::remove_all(dir);
  Outcome good = RunDemo({"--steps", "60", "--checkpoint-dir", dir, "--checkpoint-every", "50"});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  // Flip one byte in every shard file of the latest checkpoint.
  int corrupted = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename() == "checkpoint") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = f.tellg();
    if (size < 4) continue;
    f.seekg(size / 2);
    char c;
    f.read(&c, 1);
    c ^= 0x5a;
    f.seekp(size / 2);
    f.write(&c, 1);
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  Outcome bad = RunDemo({"--steps", "100", "--checkpoint-dir", dir});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("error:"));
  EXPECT_THAT(bad.err, HasSubstr("restoring"));
}

TEST(DemoTest, BadFlagsAreRefusedBeforeAnyServerStarts) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--checkpoint-every", "0"}, "--checkpoint-every must be at least 1, got 0"},
      {{"--checkpoint-every", "-5"}, "--checkpoint-every must be at least 1, got -5"},
      {{"--workers", "100000"}, "--workers must be between 1 and 64, got 100000"},
      {{"--ps", "0"}, "--ps must be between 1 and 64, got 0"},
      {{"--steps", "0"}, "--steps must be between 1 and 2^62"},
      {{"--batch-size", "0"}, "--batch-size must be between 1"},
      {{"--learning-rate", "0"}, "--learning-rate must be a positive finite number, got 0"},
      {{"--mode", "both"}, "--mode must be async or sync, got 'both'"},
  };
  for (const Case& c : cases) {
    Outcome o = RunDemo(c.args);
    EXPECT_EQ(o.exit_code, 1) << c.message;
    EXPECT_THAT(o.err, HasSubstr("error: InvalidArgument: " + c.message));
    EXPECT_THAT(o.err, testing::Not(HasSubstr("started ")));  // no server process
  }
}

// The files of the checkpoints in `dir` (everything but the state file).
std::vector<std::string> BundleFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename() != "checkpoint") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(DemoTest, DamagedCheckpointStateIsAnErrorAndNothingIsPruned) {
  const std::string dir = ::testing::TempDir() + "/demo_bad_state";
  std::filesystem::remove_all(dir);
  Outcome good = RunDemo({"--steps", "60", "--checkpoint-dir", dir, "--checkpoint-every", "20"});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  const std::vector<std::string> before = BundleFiles(dir);
  ASSERT_FALSE(before.empty());
  const std::string state = dir + "/checkpoint";
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"", "it lists no checkpoint"},
      {"\x01\x02garbage\n", "line 1 is neither model_checkpoint_path nor"},
      {"model_checkpoint_path: \"/etc/model.ckpt-5\"\n"
       "all_model_checkpoint_paths: \"/etc/model.ckpt-5\"\n",
       "names '/etc/model.ckpt-5', which is not a checkpoint"},
      {"all_model_checkpoint_paths: \"" + dir + "/../model.ckpt-5\"\n",
       "which is not a checkpoint"},
      {"all_model_checkpoint_paths: \"" + dir + "/model.ckpt-x\"\n", "which is not a checkpoint"},
  };
  for (const auto& [text, message] : damaged) {
    std::ofstream(state, std::ios::trunc) << text;
    Outcome o = RunDemo({"--steps", "200", "--checkpoint-dir", dir, "--checkpoint-every", "20"});
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_THAT(o.err,
                HasSubstr("error: DataLoss: checkpoint state file " + state + " is damaged: "));
    EXPECT_THAT(o.err, HasSubstr(message));
    EXPECT_THAT(o.err, HasSubstr("no checkpoint was deleted"));
    EXPECT_THAT(o.err, testing::Not(HasSubstr("started ")));
    EXPECT_EQ(BundleFiles(dir), before);  // nothing pruned, nothing written
  }
}

TEST(DemoTest, DivergedTrainingStopsWithAnError) {
  // A learning rate this large drives the weights to infinity and then NaN.
  Outcome o = RunDemo({"--steps", "300", "--learning-rate", "1e30", "--workers", "1"});
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_THAT(o.err, HasSubstr("error: InvalidArgument: "));
  EXPECT_THAT(o.err, HasSubstr("non-finite value"));
  EXPECT_THAT(o.err, HasSubstr("--allow-nonfinite"));

  Outcome allowed = RunDemo({"--steps", "30", "--learning-rate", "1e30", "--workers", "1",
                             "--allow-nonfinite", "--output", "json"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
}

// Overwrites tensor `name` of the checkpoint `prefix` with `bytes` (same
// size), keeping every checksum right, as a crafted file would: the
// checkpoint is read and written again with the value replaced.
void PatchCheckpointTensor(const std::string& prefix, const std::string& name,
                           const std::string& bytes) {
  auto reader = distflow::BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::pair<std::string, distflow::Tensor>> tensors;
  bool found = false;
  for (const std::string& n : (*reader)->Names()) {
    auto t = (*reader)->Read(n, (*reader)->Find(n)->dtype());
    ASSERT_TRUE(t.ok()) << t.status();
    if (n == name) {
      ASSERT_EQ(t->TotalBytes(), bytes.size());
      std::memcpy(t->raw_data(), bytes.data(), bytes.size());
      found = true;
    }
    tensors.emplace_back(n, *t);
  }
  ASSERT_TRUE(found) << name;
  reader->reset();
  distflow::BundleWriter writer(prefix);
  for (const auto& [n, t] : tensors) ASSERT_TRUE(writer.Add(n, t).ok());
  ASSERT_TRUE(writer.Finish().ok());
}

// Trains briefly into `dir` and returns the prefix of the latest checkpoint.
std::string TrainedCheckpointShard(const std::string& dir) {
  std::filesystem::remove_all(dir);
  Outcome good = RunDemo({"--steps", "40", "--checkpoint-dir", dir, "--checkpoint-every", "20"});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  std::ifstream state(dir + "/checkpoint");
  std::string first_line;
  std::getline(state, first_line);
  std::smatch m;
  EXPECT_TRUE(std::regex_search(first_line, m, std::regex(R"(\"(.*model\.ckpt-\d+)\")")))
      << first_line;
  return m[1].str();
}

TEST(DemoTest, CheckpointedGlobalStepOutOfRangeIsRefused) {
  const std::string dir = ::testing::TempDir() + "/demo_bad_step";
  const std::string shard = TrainedCheckpointShard(dir);
  for (int64_t step : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    std::string bytes(8, '\0');
    std::memcpy(bytes.data(), &step, 8);
    PatchCheckpointTensor(shard, "global_step", bytes);
    Outcome o = RunDemo({"--steps", "100", "--checkpoint-dir", dir});
    EXPECT_EQ(o.exit_code, 1) << o.out;
    EXPECT_THAT(o.err, HasSubstr("error: OutOfRange: checkpoint "));
    EXPECT_THAT(o.err,
                HasSubstr("has global_step " + std::to_string(step) + ", outside [0, 2^62]"));
  }
}

TEST(DemoTest, CheckpointedNanWeightIsRefused) {
  const std::string dir = ::testing::TempDir() + "/demo_nan_weight";
  const std::string shard = TrainedCheckpointShard(dir);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::string bytes(4, '\0');
  std::memcpy(bytes.data(), &nan, 4);
  PatchCheckpointTensor(shard, "weight", bytes);
  Outcome o = RunDemo({"--steps", "100", "--checkpoint-dir", dir});
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_THAT(o.err, HasSubstr("error: InvalidArgument: checkpoint "));
  EXPECT_THAT(o.err, HasSubstr("non-finite value"));
  EXPECT_THAT(o.err, HasSubstr("--allow-nonfinite"));
}

TEST(DemoTest, FrozenTaskEndsTheDemoNamingItAndLeavesNoProcess) {
  Outcome o = RunDemo({"--workers", "2", "--ps", "1", "--steps", "100000000"}, Training, SIGSTOP,
                      R"(/job:worker/replica:0/task:1)");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.err, HasSubstr("error: Unavailable: the demo's cluster lost a task"));
  EXPECT_THAT(o.err, HasSubstr("task /job:worker/replica:0/task:1 (pid "));
  EXPECT_THAT(o.err, HasSubstr("is frozen (stopped by signal 19 (SIGSTOP))"));
  EXPECT_LT(o.signalled_to_exit, std::chrono::seconds(30));
  ASSERT_EQ(o.task_pids.size(), 3u) << o.err;
  for (pid_t p : o.task_pids) EXPECT_TRUE(ProcessGone(p)) << "task pid " << p << " is left";
}

TEST(DemoTest, DeadTaskEndsTheDemoNamingIt) {
  Outcome o = RunDemo({"--workers", "2", "--ps", "1", "--steps", "100000000"}, Training, SIGKILL,
                      R"(/job:ps/replica:0/task:0)");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_THAT(o.err, HasSubstr("error: Unavailable: the demo's cluster lost a task"));
  EXPECT_THAT(o.err, HasSubstr("task /job:ps/replica:0/task:0 (pid "));
  EXPECT_THAT(o.err, HasSubstr("was killed by signal 9 (SIGKILL)"));
  EXPECT_LT(o.signalled_to_exit, std::chrono::seconds(30));
  for (pid_t p : o.task_pids) EXPECT_TRUE(ProcessGone(p)) << "task pid " << p << " is left";
}

}  // namespace
