// "Why is my job stuck": the Recv keys a step waits for, in the
// DeadlineExceeded of a step that hits its deadline and in the watchdog's
// log line; DescribePendingReceives and the rendezvous' pending list.
#include "distflow/common_runtime/step_watchdog.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/local_rendezvous.h"
#include "distflow/common_runtime/session.h"
#include "distflow/framework/rendezvous.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_ops.h"

namespace distflow {
namespace {

using test::AddConst;
using test::AddNode;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// "waits" on CPU:1 needs the output of "block" on CPU:0, which never comes:
// the step waits in CPU:1's _Recv of block's tensor.
std::unique_ptr<Session> StuckSession() {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  GraphDef g;
  AddConst(&g, "c", 1, "/device:CPU:0");
  AddNode(&g, "block", "TestBlock", {"c"}, "/device:CPU:0");
  AddNode(&g, "waits", "TestAdd", {"block", "c"}, "/device:CPU:1");
  EXPECT_TRUE((*session)->Create(g).ok());
  return *std::move(session);
}

std::string Key(const std::string& src, const std::string& dst, const std::string& name) {
  return Rendezvous::CreateKey(src, 1, dst, name, FrameAndIter{});
}

TEST(StepWatchdogTest, DeadlineNamesTheTensorAndItsProducer) {
  auto session = StuckSession();
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  absl::Status s = session->Run(options, {}, {"waits"}, {}, &out, nullptr);
  ASSERT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("timed out after 200 ms"));
  EXPECT_THAT(s.message(), HasSubstr("waiting for tensor 'edge_"));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("_block' from ", kCpu0, " (to ", kCpu1, ")")));
}

TEST(StepWatchdogTest, StuckStepIsLoggedWithWhatItWaitsFor) {
  const double saved = StuckStepWarnSeconds();
  SetStuckStepWarnSeconds(0.05);
  auto session = StuckSession();
  RunOptions options;
  options.set_timeout_in_ms(400);
  std::vector<Tensor> out;
  ::testing::internal::CaptureStderr();
  absl::Status s = session->Run(options, {}, {"waits"}, {}, &out, nullptr);
  const std::string log = ::testing::internal::GetCapturedStderr();
  SetStuckStepWarnSeconds(saved);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(log, HasSubstr("has run for"));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("_block' from ", kCpu0)));
}

TEST(StepWatchdogTest, QuickStepsAndAZeroThresholdLogNothing) {
  const double saved = StuckStepWarnSeconds();
  auto session = StuckSession();
  std::vector<Tensor> out;
  SetStuckStepWarnSeconds(2);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(session->Run({}, {"c"}, {}, &out).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  // Off: a stuck step is not reported, only its deadline says why.
  SetStuckStepWarnSeconds(0);
  RunOptions options;
  options.set_timeout_in_ms(200);
  ::testing::internal::CaptureStderr();
  absl::Status s = session->Run(options, {}, {"waits"}, {}, &out, nullptr);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), Not(HasSubstr("has run for")));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  SetStuckStepWarnSeconds(-1);
  EXPECT_EQ(StuckStepWarnSeconds(), 0);
  SetStuckStepWarnSeconds(saved);
}

TEST(StepWatchdogTest, LocalRendezvousListsItsWaitingReceivers) {
  LocalRendezvous rendezvous;
  Rendezvous::ParsedKey waited, sent;
  ASSERT_TRUE(Rendezvous::ParseKey(Key(kCpu0, kCpu1, "x"), &waited).ok());
  ASSERT_TRUE(Rendezvous::ParseKey(Key(kCpu0, kCpu1, "y"), &sent).ok());
  ASSERT_TRUE(rendezvous.Send(sent, {}, Tensor::FromVector<float>({1}), false).ok());
  absl::Status recv_status;
  rendezvous.RecvAsync(waited, {},
                       [&](const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
                           const Tensor&, bool) { recv_status = s; });
  EXPECT_THAT(rendezvous.PendingReceives(), ::testing::ElementsAre(std::string(waited.FullKey())));
  rendezvous.StartAbort(absl::CancelledError("done"));
  EXPECT_TRUE(rendezvous.PendingReceives().empty());
  EXPECT_TRUE(absl::IsCancelled(recv_status));
}

TEST(StepWatchdogTest, DescriptionIsSortedAndBounded) {
  EXPECT_EQ(DescribePendingReceives({}), "waiting for no tensor (a kernel is still running)");
  EXPECT_EQ(DescribePendingReceives({Key(kCpu1, kCpu0, "b"), Key(kCpu0, kCpu1, "a")}),
            absl::StrCat("waiting for tensor 'a' from ", kCpu0, " (to ", kCpu1,
                         "), tensor 'b' from ", kCpu1, " (to ", kCpu0, ")"));
  std::vector<std::string> many;
  for (int i = 0; i < 11; ++i) many.push_back(Key(kCpu0, kCpu1, absl::StrCat("t", i)));
  const std::string d = DescribePendingReceives(many);
  EXPECT_THAT(d, HasSubstr("and 3 more"));
  EXPECT_THAT(d, Not(HasSubstr("'t9'")));  // sorted: t0, t1, t10, t2, ... t7 are named
}

}  // namespace
}  // namespace distflow
