#include "distflow/graph/control_flow.h"

#include <deque>

#include "absl/container/flat_hash_map.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

std::string FrameForError(const ControlFlowInfo& info, int frame) {
  return frame == 0 ? std::string("the root frame")
                    : absl::StrCat("frame '", info.frames[frame].name, "'");
}

}  // namespace

bool IsEnter(const Node* n) {
  return n->type_string() == "Enter" || n->type_string() == "RefEnter";
}
bool IsExit(const Node* n) { return n->type_string() == "Exit" || n->type_string() == "RefExit"; }
bool IsLoopCond(const Node* n) { return n->type_string() == "LoopCond"; }

int ControlFlowInfo::InputFrame(const Node* n) const {
  const int f = node_frame[n->id()];
  return IsEnter(n) ? frames[f].parent : f;
}

int ControlFlowInfo::OutputFrame(const Node* n) const {
  const int f = node_frame[n->id()];
  return IsExit(n) ? frames[f].parent : f;
}

absl::Status BuildControlFlowInfo(const Graph& g, ControlFlowInfo* info) {
  info->frames.assign(1, LoopFrame{});
  info->node_frame.assign(g.num_node_ids(), -1);
  absl::flat_hash_map<std::string, int> frame_index;

  // The frame `dst` runs in when its input comes from `out_frame`.
  auto frame_of = [&](const Node* dst, int out_frame, int* frame) -> absl::Status {
    if (!IsEnter(dst)) {
      *frame = out_frame;
      return absl::OkStatus();
    }
    std::string name;
    absl::Status s = GetNodeAttr(dst->attrs(), "frame_name", &name);
    if (!s.ok() || name.empty()) {
      return errors::InvalidArgument(FormatNodeForError(dst->def()),
                                     " needs a non-empty frame_name attr");
    }
    int64_t parallel = 10;
    if (dst->attrs().Find("parallel_iterations") != nullptr) {
      DF_RETURN_IF_ERROR(GetNodeAttr(dst->attrs(), "parallel_iterations", &parallel));
    }
    if (parallel < 1) {
      return errors::InvalidArgument(FormatNodeForError(dst->def()), " has parallel_iterations ",
                                     parallel, "; it must be at least 1");
    }
    auto [it, inserted] = frame_index.try_emplace(name, static_cast<int>(info->frames.size()));
    if (inserted) {
      info->frames.push_back(LoopFrame{name, out_frame, dst, nullptr, parallel});
    } else if (info->frames[it->second].parent != out_frame) {
      return errors::InvalidArgument(FormatNodeForError(dst->def()), " enters frame '", name,
                                     "' from ", FrameForError(*info, out_frame),
                                     ", but the frame is also entered from ",
                                     FrameForError(*info, info->frames[it->second].parent));
    }
    *frame = it->second;
    return absl::OkStatus();
  };

  std::deque<const Node*> queue;
  for (const Node* n : g.op_nodes()) {
    bool has_op_input = false;
    for (const Edge* e : n->in_edges()) has_op_input |= e->src()->IsOp();
    if (has_op_input) continue;
    int frame = 0;
    DF_RETURN_IF_ERROR(frame_of(n, 0, &frame));
    info->node_frame[n->id()] = frame;
    queue.push_back(n);
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    const int frame = info->node_frame[n->id()];
    if (IsLoopCond(n) && frame != 0 && info->frames[frame].loop_cond == nullptr) {
      info->frames[frame].loop_cond = n;
    }
    if (IsExit(n) && frame == 0) {
      return errors::InvalidArgument(FormatNodeForError(n->def()), " is not inside a loop");
    }
    const int out_frame = info->OutputFrame(n);
    for (const Edge* e : n->out_edges()) {
      const Node* dst = e->dst();
      if (!dst->IsOp()) continue;
      int dst_frame = 0;
      DF_RETURN_IF_ERROR(frame_of(dst, out_frame, &dst_frame));
      int& assigned = info->node_frame[dst->id()];
      if (assigned < 0) {
        assigned = dst_frame;
        queue.push_back(dst);
      } else if (assigned != dst_frame) {
        return errors::InvalidArgument(
            FormatNodeForError(dst->def()), " has inputs from different frames: '", n->name(),
            "' is in ", FrameForError(*info, out_frame), ", another input in ",
            FrameForError(*info, IsEnter(dst) ? info->frames[assigned].parent : assigned));
      }
    }
  }
  for (const Node* n : g.op_nodes()) {
    if (info->node_frame[n->id()] < 0) {
      return errors::InvalidArgument(FormatNodeForError(n->def()),
                                     " is reachable only through a NextIteration's back edge");
    }
  }
  return absl::OkStatus();
}

}  // namespace distflow
