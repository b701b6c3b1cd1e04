#include "distflow/common_runtime/step_stats_collector.h"

#include <atomic>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"

namespace distflow {

void StepStatsCollector::Save(const std::string& device, NodeExecStats stats) {
  absl::MutexLock l(&mu_);
  by_device_[device].push_back(std::move(stats));
}

void StepStatsCollector::Finalize(StepStats* out) {
  std::map<std::string, std::vector<NodeExecStats>> by_device;
  {
    absl::MutexLock l(&mu_);
    std::swap(by_device, by_device_);
  }
  for (auto& [device, records] : by_device) {
    DeviceStepStats* dev = out->add_dev_stats();
    dev->set_device(device);
    std::set<uint32_t> threads;
    for (NodeExecStats& r : records) {
      threads.insert(r.thread_id());
      *dev->add_node_stats() = std::move(r);
    }
    for (uint32_t t : threads) {
      (*dev->mutable_thread_names())[t] = absl::StrCat("thread ", t);
    }
  }
}

uint32_t CurrentThreadIdForStats() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

NodeStatsRecorder::NodeStatsRecorder(const std::string& node_name, int64_t scheduled_micros) {
  start_nanos_ = NowNanos();
  stats_.set_node_name(node_name);
  stats_.set_scheduled_micros(scheduled_micros);
  stats_.set_scheduled_nanos(scheduled_micros * 1000);
  stats_.set_all_start_micros(start_nanos_ / 1000);
  stats_.set_all_start_nanos(start_nanos_);
  stats_.set_thread_id(CurrentThreadIdForStats());
}

void NodeStatsRecorder::OpStart() {
  const int64_t rel = NowNanos() - start_nanos_;
  stats_.set_op_start_rel_nanos(rel);
  stats_.set_op_start_rel_micros(rel / 1000);
}

void NodeStatsRecorder::OpEnd() {
  const int64_t rel = NowNanos() - start_nanos_;
  stats_.set_op_end_rel_nanos(rel);
  stats_.set_op_end_rel_micros(rel / 1000);
}

void NodeStatsRecorder::Finish(OpKernelContext* ctx, const std::string& device,
                               StepStatsCollector* collector) {
  for (int i = 0; i < ctx->num_outputs(); ++i) {
    const Tensor* t = ctx->mutable_output(i);
    if (t == nullptr) continue;
    NodeOutput* out = stats_.add_output();
    out->set_slot(i);
    TensorDescription* desc = out->mutable_tensor_description();
    desc->set_dtype(t->dtype());
    t->shape().AsProto(desc->mutable_shape());
    const int64_t bytes = static_cast<int64_t>(t->TotalBytes());
    desc->mutable_allocation_description()->set_requested_bytes(bytes);
    desc->mutable_allocation_description()->set_allocated_bytes(bytes);
    desc->mutable_allocation_description()->set_allocator_name("cpu");
  }
  std::string label = absl::StrCat(stats_.node_name(), " = ", ctx->op_kernel().type_string(), "()");
  stats_.set_timeline_label(std::move(label));
  const int64_t rel = NowNanos() - start_nanos_;
  stats_.set_all_end_rel_nanos(rel);
  stats_.set_all_end_rel_micros(rel / 1000);
  collector->Save(device, std::move(stats_));
}

}  // namespace distflow
