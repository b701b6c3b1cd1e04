// Hash tables through DirectSession, as a feature column's vocabulary uses
// them: HashTableV2 made on first run and shared by name, filled once by
// LookupTableImportV2 (again with the same entries: fine; other entries:
// FailedPrecondition), read by LookupTableFindV2 with a default for unknown
// keys; a lookup before the fill fails.
#include <string>
#include <vector>

#include "distflow/common_runtime/session.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_ops.h"

namespace distflow {
namespace {

using test::AddNode;
using test::AddPlaceholder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Strings(const std::vector<std::string>& v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
  return t;
}

NodeDef* AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = AddNode(g, name, "Const", {});
  AddNodeAttr("value", value, n);
  AddNodeAttr("dtype", value.dtype(), n);
  return n;
}

GraphDef VocabularyGraph() {
  GraphDef g;
  NodeDef* table = AddNode(&g, "table", "HashTableV2", {});
  AddNodeAttr("key_dtype", DT_STRING, table);
  AddNodeAttr("value_dtype", DT_INT64, table);
  AddNodeAttr("shared_name", std::string("vocab"), table);
  AddConst(&g, "keys", Strings({"ATA", "NAP", "ASY", "TA"}));
  AddConst(&g, "values", Tensor::FromVector<int64_t>({0, 1, 2, 3}));
  AddConst(&g, "other_values", Tensor::FromVector<int64_t>({3, 2, 1, 0}));
  for (const auto& [name, values] : std::vector<std::pair<std::string, std::string>>{
           {"init", "values"}, {"reinit", "other_values"}}) {
    NodeDef* import = AddNode(&g, name, "LookupTableImportV2", {"table", "keys", values});
    AddNodeAttr("Tin", DT_STRING, import);
    AddNodeAttr("Tout", DT_INT64, import);
  }
  AddPlaceholder(&g, "words", DT_STRING, PartialTensorShape({-1}));
  AddConst(&g, "unknown", Tensor::Scalar<int64_t>(-1));
  NodeDef* find = AddNode(&g, "find", "LookupTableFindV2", {"table", "words", "unknown"});
  AddNodeAttr("Tin", DT_STRING, find);
  AddNodeAttr("Tout", DT_INT64, find);
  AddNode(&g, "size", "LookupTableSizeV2", {"table"});
  return g;
}

TEST(LookupTableSessionTest, FillOnceThenFindWithDefaults) {
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  Session& s = **session;
  ASSERT_TRUE(s.Create(VocabularyGraph()).ok());
  std::vector<Tensor> out;
  absl::Status st = s.Run({{"words", Strings({"TA"})}}, {"find"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("the table is not initialized"));

  ASSERT_TRUE(s.Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(s.Run({}, {}, {"init"}, &out).ok());  // the same entries again
  st = s.Run({}, {}, {"reinit"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;

  st = s.Run({{"words", Strings({"TA", "XX", "ATA", "", "ASY"})}}, {"find", "size"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_THAT(out[0].flat<int64_t>(), ElementsAre(3, -1, 0, -1, 2));
  EXPECT_EQ(out[1].scalar<int64_t>(), 4);
}

}  // namespace
}  // namespace distflow
