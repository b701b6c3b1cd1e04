// Hash tables through DirectSession, as a feature column's vocabulary uses
// them: HashTableV2 made on first run and shared by name, filled once by
// LookupTableImportV2 (again with the same entries: fine; other entries:
// FailedPrecondition), read by LookupTableFindV2 with a default for unknown
// keys; a lookup before the fill fails. InitializeTableFromTextFileV2 fills
// tables from vocabulary files: whole lines to line numbers, columns to
// parsed numbers, and errors naming the file and line.
#include <filesystem>
#include <string>
#include <vector>

#include "distflow/common_runtime/session.h"
#include "distflow/core/env.h"
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

// A table of `key` -> `value` dtypes filled from the file fed to "file" by
// InitializeTableFromTextFileV2 with `attrs`, and a lookup of "keys".
GraphDef TextFileTableGraph(DataType key, DataType value,
                            const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  GraphDef g;
  NodeDef* table = AddNode(&g, "table", "HashTableV2", {});
  AddNodeAttr("key_dtype", key, table);
  AddNodeAttr("value_dtype", value, table);
  AddPlaceholder(&g, "file", DT_STRING, PartialTensorShape({}));
  NodeDef* init = AddNode(&g, "init", "InitializeTableFromTextFileV2", {"table", "file"});
  for (const auto& [name, v] : attrs) (*init->mutable_attr())[name] = v;
  AddPlaceholder(&g, "keys", key, PartialTensorShape({-1}));
  Tensor unknown(value, TensorShape());
  if (value == DT_INT64) unknown.scalar<int64_t>() = -1;
  if (value == DT_FLOAT) unknown.scalar<float>() = -1;
  AddConst(&g, "unknown", unknown);
  NodeDef* find = AddNode(&g, "find", "LookupTableFindV2", {"table", "keys", "unknown"});
  AddNodeAttr("Tin", key, find);
  AddNodeAttr("Tout", value, find);
  return g;
}

AttrValue Int(int64_t v) {
  AttrValue a;
  a.set_i(v);
  return a;
}

TEST(LookupTableSessionTest, TextFilesFillTablesByLineOrColumn) {
  const std::string dir = ::testing::TempDir() + "/text_file_tables";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/vocab.txt", "ATA\nNAP\r\nASY\n").ok());
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/ids.tsv", "7\t0.5\n9\t1.5\n").ok());
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/bad.tsv", "7\t0.5\n9\tlots\n").ok());
  std::vector<Tensor> out;
  {
    auto session = NewSession(SessionOptions());
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE((*session)
                    ->Create(TextFileTableGraph(
                        DT_STRING, DT_INT64,
                        {{"key_index", Int(-1)}, {"value_index", Int(-2)}, {"offset", Int(10)}}))
                    .ok());
    absl::Status s = (*session)->Run({{"file", Tensor::Scalar<std::string>(dir + "/vocab.txt")}},
                                     {}, {"init"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    s = (*session)->Run({{"keys", Strings({"ASY", "NAP", "TA"})}}, {"find"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_THAT(out[0].flat<int64_t>(), ElementsAre(12, 11, -1));
  }
  {
    auto session = NewSession(SessionOptions());
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE((*session)
                    ->Create(TextFileTableGraph(DT_INT64, DT_FLOAT,
                                                {{"key_index", Int(0)}, {"value_index", Int(1)}}))
                    .ok());
    absl::Status s = (*session)->Run({{"file", Tensor::Scalar<std::string>(dir + "/bad.tsv")}}, {},
                                     {"init"}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("bad.tsv line 2: 'lots' is not a number"));
    s = (*session)->Run({{"file", Tensor::Scalar<std::string>(dir + "/ids.tsv")}}, {}, {"init"},
                        &out);
    ASSERT_TRUE(s.ok()) << s;
    s = (*session)->Run({{"keys", Tensor::FromVector<int64_t>({9, 8, 7})}}, {"find"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_THAT(out[0].flat<float>(), ElementsAre(1.5f, -1.0f, 0.5f));
  }
  {
    auto session = NewSession(SessionOptions());
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE((*session)
                    ->Create(TextFileTableGraph(
                        DT_STRING, DT_INT64,
                        {{"key_index", Int(-1)}, {"value_index", Int(-2)}, {"vocab_size", Int(5)}}))
                    .ok());
    absl::Status s = (*session)->Run({{"file", Tensor::Scalar<std::string>(dir + "/vocab.txt")}},
                                     {}, {"init"}, &out);
    EXPECT_THAT(std::string(s.message()), HasSubstr("vocab.txt has 3 lines but vocab_size is 5"));
    s = (*session)->Run({{"file", Tensor::Scalar<std::string>(dir + "/missing.txt")}}, {}, {"init"},
                        &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distflow
