// MapDataset and ParallelMapDatasetV2 with a function from the graph's
// library (and a captured argument), written as TensorFlow writes them;
// results come in input order; a function of the wrong signature or a
// missing one is an error naming it.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "distflow/common_runtime/session.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// range(0, 8) mapped by MAP_OP with f = FUNCTION(x, c) where c = 10 is
// captured; AddCaptured returns x * c + c.
constexpr char kGraph[] = R"pb(
  node {
    name: "start"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT64
          tensor_shape {}
          int64_val: 0
        }
      }
    }
  }
  node {
    name: "stop"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT64
          tensor_shape {}
          int64_val: 8
        }
      }
    }
  }
  node {
    name: "step"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT64
          tensor_shape {}
          int64_val: 1
        }
      }
    }
  }
  node {
    name: "captured"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT64
          tensor_shape {}
          int64_val: 10
        }
      }
    }
  }
  node {
    name: "parallelism"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT64
          tensor_shape {}
          int64_val: 3
        }
      }
    }
  }
  node {
    name: "range"
    op: "RangeDataset"
    input: "start"
    input: "stop"
    input: "step"
    attr {
      key: "output_types"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_shapes"
      value { list { shape {} } }
    }
  }
  node {
    name: "map"
    op: "MAP_OP"
    input: "range"
    input: "captured" EXTRA_INPUT
    attr {
      key: "f"
      value { func { name: "FUNCTION" } }
    }
    attr {
      key: "Targuments"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_types"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_shapes"
      value { list { shape {} } }
    }
  }
  node {
    name: "Iterator"
    op: "IteratorV2"
    attr {
      key: "shared_name"
      value { s: "it" }
    }
    attr {
      key: "container"
      value { s: "" }
    }
    attr {
      key: "output_types"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_shapes"
      value { list { shape {} } }
    }
  }
  node { name: "MakeIterator" op: "MakeIterator" input: "map" input: "Iterator" }
  node {
    name: "IteratorGetNext"
    op: "IteratorGetNext"
    input: "Iterator"
    attr {
      key: "output_types"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_shapes"
      value { list { shape {} } }
    }
  }
  library {
    function {
      signature {
        name: "AddCaptured"
        input_arg { name: "x" type: DT_INT64 }
        input_arg { name: "c" type: DT_INT64 }
        output_arg { name: "y" type: DT_INT64 }
      }
      node_def {
        name: "scale"
        op: "Mul"
        input: "x"
        input: "c"
        attr {
          key: "T"
          value { type: DT_INT64 }
        }
      }
      node_def {
        name: "add"
        op: "AddV2"
        input: "scale:z:0"
        input: "c"
        attr {
          key: "T"
          value { type: DT_INT64 }
        }
      }
      ret { key: "y" value: "add:z:0" }
    }
    function {
      signature {
        name: "FloatOnly"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      ret { key: "y" value: "x" }
    }
  }
)pb";

// Runs the pipeline with `map_op` and `function`; the elements or the error.
absl::Status RunMap(const std::string& map_op, const std::string& function,
                    std::vector<int64_t>* out) {
  const std::string text = absl::StrReplaceAll(
      kGraph, {{"MAP_OP", map_op},
               {"FUNCTION", function},
               {"EXTRA_INPUT", map_op == "MapDataset" ? "" : "input: \"parallelism\""}});
  GraphDef graph;
  if (!google::protobuf::TextFormat::ParseFromString(text, &graph)) {
    return absl::InternalError("bad test graph");
  }
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(SessionOptions());
  if (!session.ok()) return session.status();
  if (absl::Status s = (*session)->Create(graph); !s.ok()) return s;
  if (absl::Status s = (*session)->Run({}, {}, {"MakeIterator"}, nullptr); !s.ok()) return s;
  for (;;) {
    std::vector<Tensor> t;
    absl::Status s = (*session)->Run({}, {"IteratorGetNext:0"}, {}, &t);
    if (s.code() == absl::StatusCode::kOutOfRange) return absl::OkStatus();
    if (!s.ok()) return s;
    out->push_back(t[0].scalar<int64_t>());
  }
}

TEST(MapDatasetTest, MapsWithACapturedArgument) {
  for (const char* op : {"MapDataset", "ParallelMapDatasetV2"}) {
    std::vector<int64_t> out;
    absl::Status s = RunMap(op, "AddCaptured", &out);
    ASSERT_TRUE(s.ok()) << op << ": " << s;
    EXPECT_EQ(out, (std::vector<int64_t>{10, 20, 30, 40, 50, 60, 70, 80})) << op;
  }
}

TEST(MapDatasetTest, AFunctionOfTheWrongSignatureOrAMissingOneIsAnError) {
  std::vector<int64_t> out;
  absl::Status s = RunMap("MapDataset", "FloatOnly", &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("FloatOnly"));
  s = RunMap("ParallelMapDatasetV2", "Nowhere", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("Nowhere"));
}

}  // namespace
}  // namespace distflow
