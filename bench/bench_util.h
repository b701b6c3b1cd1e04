// Helpers the benchmark programs share: the median of a sample (median.h)
// and the one-node graph whose step does no work.
#ifndef DISTFLOW_BENCH_BENCH_UTIL_H_
#define DISTFLOW_BENCH_BENCH_UTIL_H_

#include <string>
#include <vector>

#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph.pb.h"
#include "median.h"

namespace distflow {
namespace bench {

// A graph of one float scalar Const named "c" placed on `device`.
inline GraphDef OneConstGraph(const std::string& device) {
  GraphDef g;
  NodeDef* c = g.add_node();
  c->set_name("c");
  c->set_op("Const");
  c->set_device(device);
  AddNodeAttr("dtype", DT_FLOAT, c);
  AddNodeAttr("value", Tensor::Scalar<float>(1.0f), c);
  return g;
}

}  // namespace bench
}  // namespace distflow

#endif  // DISTFLOW_BENCH_BENCH_UTIL_H_
