#include "distflow/graph/shape_refiner.h"

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"

namespace distflow {

absl::Status ShapeRefiner::AddNode(const Node* node) {
  const int n_in = node->num_inputs();
  std::vector<PartialTensorShape> shapes(n_in);
  std::vector<const Tensor*> tensors(n_in, nullptr);
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge() || e->dst_input() >= n_in) continue;
    shapes[e->dst_input()] = OutputShape(e->src(), e->src_output());
    tensors[e->dst_input()] = ConstantValue(e->src(), e->src_output());
  }
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(node->type_string());
  InferenceContext ctx(node->def(), node->op_def(), node->input_types(), node->output_types(),
                       shapes, tensors);
  if (reg != nullptr && reg->shape_fn) {
    absl::Status s = reg->shape_fn(&ctx);
    if (!s.ok()) {
      return errors::Annotate(s, absl::StrCat(FormatNodeForError(node->def()), ": "));
    }
  }
  NodeInfo& info = info_[node];
  info.shapes = ctx.outputs();
  info.constants.clear();
  info.constants.resize(node->num_outputs());
  if (node->IsConstant()) {
    auto t = std::make_unique<Tensor>();
    if (GetNodeAttr(node->attrs(), "value", t.get()).ok()) info.constants[0] = std::move(t);
  } else if (node->type_string() == "Shape" && n_in == 1) {
    TensorShape full;
    if (shapes[0].AsTensorShape(&full)) {
      const DataType out_type = node->output_type(0);
      auto t = std::make_unique<Tensor>(out_type, TensorShape({full.dims()}));
      for (int d = 0; d < full.dims(); ++d) {
        if (out_type == DT_INT32) {
          t->base<int32_t>()[d] = static_cast<int32_t>(full.dim_size(d));
        } else {
          t->base<int64_t>()[d] = full.dim_size(d);
        }
      }
      info.constants[0] = std::move(t);
    }
  }
  return absl::OkStatus();
}

const std::vector<PartialTensorShape>* ShapeRefiner::OutputShapes(const Node* node) const {
  auto it = info_.find(node);
  return it == info_.end() ? nullptr : &it->second.shapes;
}

PartialTensorShape ShapeRefiner::OutputShape(const Node* node, int index) const {
  const auto* shapes = OutputShapes(node);
  if (shapes == nullptr || index < 0 || index >= static_cast<int>(shapes->size())) {
    return PartialTensorShape::Unknown();
  }
  return (*shapes)[index];
}

const Tensor* ShapeRefiner::ConstantValue(const Node* node, int index) const {
  auto it = info_.find(node);
  if (it == info_.end() || index < 0 || index >= static_cast<int>(it->second.constants.size())) {
    return nullptr;
  }
  return it->second.constants[index].get();
}

}  // namespace distflow
