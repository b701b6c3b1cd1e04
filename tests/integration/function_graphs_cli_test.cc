// Runs `distflow run` on the TensorFlow 2 style graphs in examples/graphs/
// (a library of functions called through StatefulPartitionedCall, If, Case
// and While nodes) and checks the values it prints.
#include <string>

#include "absl/strings/str_cat.h"
#include "command_line.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using Result = distflow::test::CommandOutput;

// Runs `distflow run <args>`, stderr folded into the output.
Result RunDistflow(const std::string& args) {
  return distflow::test::RunCommandLine(absl::StrCat(DISTFLOW_BINARY, " run ", args, " 2>&1"));
}

std::string Example(const std::string& name) {
  return absl::StrCat(DISTFLOW_EXAMPLES_DIR, "/", name);
}

// The value of each (scalar) fetch in `distflow run --output json` output.
std::vector<double> Values(const std::string& json_text) {
  std::vector<double> values;
  const nlohmann::json parsed = nlohmann::json::parse(json_text);
  for (const auto& fetch : parsed["fetches"]) {
    values.push_back(fetch["values"][0].get<double>());
  }
  return values;
}

TEST(FunctionGraphsCliTest, StatefulPartitionedCall) {
  Result r = RunDistflow(
      absl::StrCat(Example("function_call.pbtxt"), " --feed x=3 --fetch out --output json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Values(r.out), std::vector<double>{10});
}

TEST(FunctionGraphsCliTest, IfAndCaseOnOneAndThreeDevices) {
  for (int devices : {1, 3}) {
    for (const auto& [feeds, expected] : std::vector<std::pair<std::string, std::vector<double>>>{
             {"--feed x=3 --feed i=1", {6, 30}},
             {"--feed x=-2 --feed i=0", {2, -1}},
             {"--feed x=-2 --feed i=9", {2, 2}}}) {
      Result r = RunDistflow(absl::StrCat(Example("functional_cond.pbtxt"), " ", feeds,
                                          " --fetch if_out --fetch case_out --output json",
                                          " --devices ", devices));
      ASSERT_EQ(r.exit_code, 0) << r.out;
      EXPECT_EQ(Values(r.out), expected) << feeds << " on " << devices << " devices";
    }
  }
}

TEST(FunctionGraphsCliTest, WhileOnOneAndThreeDevices) {
  for (int devices : {1, 3}) {
    Result r = RunDistflow(absl::StrCat(Example("functional_while.pbtxt"),
                                        " --feed x=1.5 --fetch while_out --fetch count",
                                        " --output json --devices ", devices));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(Values(r.out), (std::vector<double>{48, 5})) << devices << " devices";
  }
}

}  // namespace
