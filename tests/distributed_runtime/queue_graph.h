// The queue graph distributed tests step: `deq` waits until `enq` has put a
// 7 (the Const `v`) in the FIFO queue `q`, so a step fetching `deq` alone
// runs until its caller gives up or cancels it.
#ifndef DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_QUEUE_GRAPH_H_
#define DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_QUEUE_GRAPH_H_

namespace distflow {
namespace test {

inline constexpr char kQueueGraph[] = R"pb(
  node {
    name: "q"
    op: "FIFOQueueV2"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "v"
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
          tensor_shape {}
          float_val: 7
        }
      }
    }
  }
  node {
    name: "enq"
    op: "QueueEnqueueV2"
    input: "q"
    input: "v"
    attr {
      key: "Tcomponents"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "deq"
    op: "QueueDequeueV2"
    input: "q"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
)pb";

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_QUEUE_GRAPH_H_
