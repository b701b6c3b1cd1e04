// A tf.data pipeline written as TensorFlow writes it in a GraphDef (text
// form, TensorFlow's op names and attrs, ShuffleDatasetV3 with an
// AnonymousSeedGenerator) runs in a session: MakeIterator, then
// IteratorGetNext until OutOfRange.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "distflow/common_runtime/session.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

constexpr char kPipeline[] = R"pb(
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
          int64_val: 5
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
    name: "seed"
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
    name: "reshuffle"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_BOOL
          tensor_shape {}
          bool_val: true
        }
      }
    }
  }
  node {
    name: "drop"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_BOOL
          tensor_shape {}
          bool_val: false
        }
      }
    }
  }
  node {
    name: "batch_size"
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
          int64_val: 2
        }
      }
    }
  }
  node {
    name: "RangeDataset"
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
    name: "SeedGenerator"
    op: "AnonymousSeedGenerator"
    input: "seed"
    input: "seed"
    input: "reshuffle"
  }
  node {
    name: "ShuffleDatasetV3"
    op: "ShuffleDatasetV3"
    input: "RangeDataset"
    input: "stop"
    input: "seed"
    input: "seed"
    input: "SeedGenerator"
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
    name: "BatchDatasetV2"
    op: "BatchDatasetV2"
    input: "ShuffleDatasetV3"
    input: "batch_size"
    input: "drop"
    attr {
      key: "output_types"
      value { list { type: DT_INT64 } }
    }
    attr {
      key: "output_shapes"
      value { list { shape { dim { size: -1 } } } }
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
      value { list { shape { dim { size: -1 } } } }
    }
  }
  node { name: "MakeIterator" op: "MakeIterator" input: "BatchDatasetV2" input: "Iterator" }
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
      value { list { shape { dim { size: -1 } } } }
    }
  }
)pb";

TEST(GraphDefPipelineTest, RunsATensorFlowStylePipeline) {
  GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kPipeline, &graph));
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(graph).ok());
  ASSERT_TRUE((*session)->Run({}, {}, {"MakeIterator"}, nullptr).ok());
  std::vector<int64_t> seen;
  std::vector<int64_t> sizes;
  for (;;) {
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({}, {"IteratorGetNext:0"}, {}, &out);
    if (s.code() == absl::StatusCode::kOutOfRange) break;
    ASSERT_TRUE(s.ok()) << s;
    sizes.push_back(out[0].NumElements());
    for (int64_t v : out[0].flat<int64_t>()) seen.push_back(v);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 2, 1}));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace distflow
