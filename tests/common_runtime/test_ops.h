// Small ops and kernels the runtime tests build graphs from, all on int64
// scalars or vectors so results are exact:
//   TestConst(value)          -> value
//   TestAdd(a, b)             -> a + b            (cheap)
//   TestSum(x: N * int64)     -> sum of inputs    (cheap)
//   TestAddOne(x, expensive)  -> x + 1            (cheap unless expensive)
//   TestAsyncAddOne(x)        -> x + 1, finished later on the runner
//   TestFail(x)               -> InvalidArgument "boom"
//   TestBlock(x)              -> waits until the step is cancelled
//   TestCounter()             -> 1, 2, 3, ... across steps (stateful)
// Plus graph-building helpers. Registered at static initialization.
#ifndef DISTFLOW_TESTS_COMMON_RUNTIME_TEST_OPS_H_
#define DISTFLOW_TESTS_COMMON_RUNTIME_TEST_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"
#include "distflow/graph.pb.h"

namespace distflow {
namespace test {

// Appends a node to `g`. `inputs` are tensor names ("x", "x:1", "^c").
NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& device = "");
NodeDef* AddConst(GraphDef* g, const std::string& name, int64_t value,
                  const std::string& device = "");
NodeDef* AddPlaceholder(GraphDef* g, const std::string& name, DataType dtype,
                        const PartialTensorShape& shape, const std::string& device = "");

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_COMMON_RUNTIME_TEST_OPS_H_
