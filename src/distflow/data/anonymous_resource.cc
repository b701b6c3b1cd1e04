#include "distflow/data/anonymous_resource.h"

#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {

std::string ResourceDeleterToken::DebugString() const {
  return absl::StrCat("deleter of ", handle_.DebugString());
}

std::string UniqueResourceName(absl::string_view prefix) {
  static std::atomic<int64_t> counter{0};
  return absl::StrCat(prefix, "_", counter.fetch_add(1, std::memory_order_relaxed));
}

void SetHandleAndDeleterOutputs(OpKernelContext* ctx, const ResourceHandle& handle) {
  Tensor h(DT_RESOURCE, TensorShape());
  h.scalar<ResourceHandle>() = handle;
  ctx->set_output(0, std::move(h));
  Tensor d(DT_VARIANT, TensorShape());
  d.scalar<Variant>() = Variant(std::make_shared<const ResourceDeleterToken>(handle));
  ctx->set_output(1, std::move(d));
}

absl::Status DeleteAnonymousResource(OpKernelContext* ctx) {
  DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, 0));
  const Tensor& d = ctx->input(1);
  std::shared_ptr<const ResourceDeleterToken> token;
  if (d.dtype() == DT_VARIANT && d.dims() == 0) {
    token = d.scalar<Variant>().get<ResourceDeleterToken>();
  }
  if (token == nullptr || token->handle().name() != handle.name() ||
      token->handle().container() != handle.container()) {
    return errors::InvalidArgument("node '", ctx->op_kernel().name(),
                                   "': input 'deleter' is not the deleter of ",
                                   handle.DebugString());
  }
  DF_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx->device()));
  return rm->Delete(handle);
}

}  // namespace distflow
