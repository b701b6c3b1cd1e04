// Runs op shape functions over a graph as it is built, so a bad shape fails
// at construction with the node's name. Nodes must be added after their
// inputs. Inputs produced by Const nodes (or Shape of a fully known shape)
// are given to shape functions as constant tensors. Not thread-safe.
#ifndef DISTFLOW_GRAPH_SHAPE_REFINER_H_
#define DISTFLOW_GRAPH_SHAPE_REFINER_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/graph/graph.h"

namespace distflow {

class ShapeRefiner {
 public:
  // Infers the output shapes of `node`. InvalidArgument prefixed with
  // "node 'x' (Op): " when its shape function rejects the inputs.
  absl::Status AddNode(const Node* node);
  // nullptr for a node not added.
  const std::vector<PartialTensorShape>* OutputShapes(const Node* node) const;
  // The shape of one output; unknown when the node was not added.
  PartialTensorShape OutputShape(const Node* node, int index) const;
  // The constant value of a node's output when known, else nullptr.
  const Tensor* ConstantValue(const Node* node, int index) const;

 private:
  struct NodeInfo {
    std::vector<PartialTensorShape> shapes;
    std::vector<std::unique_ptr<Tensor>> constants;  // by output index
  };
  absl::flat_hash_map<const Node*, NodeInfo> info_;
};

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_SHAPE_REFINER_H_
