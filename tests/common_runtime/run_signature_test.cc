// The one normalisation of a run's feeds, fetches and targets.
#include "distflow/common_runtime/run_signature.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RunSignatureTest, CanonicalSortedAndUnique) {
  RunSignature sig;
  RunSignatureIndex index;
  ASSERT_TRUE(NormalizeRunSignature({"b", "a:1"}, {"y", "x:0", "y:0", "x"}, {"t2", "t1", "t2"},
                                    &sig, &index)
                  .ok());
  EXPECT_THAT(sig.feeds, ElementsAre("a:1", "b:0"));
  EXPECT_THAT(sig.fetches, ElementsAre("x:0", "y:0"));
  EXPECT_THAT(sig.targets, ElementsAre("t1", "t2"));
  EXPECT_THAT(index.feed_index, ElementsAre(1, 0));
  // Every fetch as given maps to its tensor, repeats included.
  EXPECT_THAT(index.fetch_index, ElementsAre(1, 0, 1, 0));
}

TEST(RunSignatureTest, EqualSignaturesShareAKey) {
  RunSignature a, b, c;
  ASSERT_TRUE(NormalizeRunSignature({"p"}, {"x", "y"}, {}, &a).ok());
  ASSERT_TRUE(NormalizeRunSignature({"p:0"}, {"y:0", "x"}, {}, &b).ok());
  ASSERT_TRUE(NormalizeRunSignature({"p"}, {"x"}, {"y"}, &c).ok());
  EXPECT_EQ(a.key, b.key);
  EXPECT_NE(a.key, c.key);
}

TEST(RunSignatureTest, BadNamesAreErrorsNamingThem) {
  RunSignature sig;
  absl::Status s = NormalizeRunSignature({"x", "x:0"}, {}, {}, &sig);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("feed 'x' (tensor 'x:0') is listed more than once"));
  s = NormalizeRunSignature({}, {"^c"}, {}, &sig);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("fetch '^c' names a control input"));
  s = NormalizeRunSignature({}, {"c:x"}, {}, &sig);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("fetch 'c:x'"));
  s = NormalizeRunSignature({":0"}, {}, {}, &sig);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("feed ':0'"));
}

}  // namespace
}  // namespace distflow
