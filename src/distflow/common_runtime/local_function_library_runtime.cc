#include "distflow/common_runtime/local_function_library_runtime.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/local_rendezvous.h"
#include "distflow/core/refcount.h"
#include "distflow/core/status.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/function_body.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/lower_functional_ops.h"

namespace distflow {
namespace {

// The rendezvous of one call: arguments go in and results come out on the
// runtime's own device.
class CallRendezvous : public Rendezvous {
 public:
  absl::Status Send(const ParsedKey& key, const Args& args, const Tensor& value,
                    bool is_dead) override {
    return local_.Send(key, args, value, is_dead);
  }
  void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) override {
    local_.RecvAsync(key, args, std::move(done));
  }
  std::vector<std::string> PendingReceives() const override { return local_.PendingReceives(); }
  void StartAbort(const absl::Status& status) override { local_.StartAbort(status); }

 private:
  ~CallRendezvous() override = default;
  LocalRendezvous local_;
};

constexpr int kDefaultCallThreads = 2;

}  // namespace

struct LocalFunctionLibraryRuntime::Item {
  std::string name;
  std::unique_ptr<Executor> executor;
  DataTypeVector arg_types, ret_types;
  std::vector<Rendezvous::ParsedKey> arg_keys, ret_keys;
};

LocalFunctionLibraryRuntime::LocalFunctionLibraryRuntime(
    Device* device, std::shared_ptr<const FunctionLibraryDefinition> library)
    : device_(device), library_(std::move(library)) {}

LocalFunctionLibraryRuntime::~LocalFunctionLibraryRuntime() = default;

size_t LocalFunctionLibraryRuntime::num_instantiations() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

absl::StatusOr<std::unique_ptr<LocalFunctionLibraryRuntime::Item>>
LocalFunctionLibraryRuntime::Build(const NameAttrList& func) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<FunctionBody> body, InstantiateFunctionBody(library_, func));
  auto item = std::make_unique<Item>();
  item->name = func.name();
  item->arg_types = body->arg_types;
  item->ret_types = body->ret_types;
  std::unique_ptr<Graph> graph = std::move(body->graph);
  const std::string prefix = absl::StrCat("function '", func.name(), "': ");
  DF_RETURN_IF_ERROR(errors::Annotate(LowerFunctionalOps(graph.get()), prefix));

  // _Arg i -> _Recv of "arg:i", _Retval i -> _Send of "ret:i".
  auto transfer = [this](NodeDef* def, const std::string& tensor_name) {
    AddNodeAttr("tensor_name", tensor_name, def);
    AddNodeAttr("send_device", device_->name(), def);
    AddNodeAttr("recv_device", device_->name(), def);
    AddNodeAttr("send_device_incarnation", static_cast<int64_t>(device_->incarnation()), def);
    AddNodeAttr("client_terminated", true, def);
  };
  auto key = [this](const std::string& tensor_name) {
    return Rendezvous::CreateKey(device_->name(), device_->incarnation(), device_->name(),
                                 tensor_name, FrameAndIter());
  };
  item->arg_keys.resize(body->arg_nodes.size());
  item->ret_keys.resize(body->ret_nodes.size());
  for (size_t i = 0; i < body->arg_nodes.size(); ++i) {
    Node* arg = body->arg_nodes[i];
    const std::string tensor_name = absl::StrCat("arg:", i);
    NodeDef def;
    def.set_name(graph->NewName("arg_recv"));
    def.set_op("_Recv");
    AddNodeAttr("tensor_type", BaseType(item->arg_types[i]), &def);
    transfer(&def, tensor_name);
    DF_ASSIGN_OR_RETURN(Node * recv, graph->AddNode(std::move(def)));
    std::vector<const Edge*> out(arg->out_edges().begin(), arg->out_edges().end());
    for (const Edge* e : out) {
      if (e->IsControlEdge()) {
        graph->AddControlEdge(recv, e->dst());
      } else {
        graph->AddEdge(recv, 0, e->dst(), e->dst_input());
      }
    }
    graph->RemoveNode(arg);
    DF_RETURN_IF_ERROR(Rendezvous::ParseKey(key(tensor_name), &item->arg_keys[i]));
  }
  for (size_t i = 0; i < body->ret_nodes.size(); ++i) {
    Node* ret = body->ret_nodes[i];
    const Edge* in = nullptr;
    DF_RETURN_IF_ERROR(ret->input_edge(0, &in));
    const std::string tensor_name = absl::StrCat("ret:", i);
    NodeDef def;
    def.set_name(graph->NewName("ret_send"));
    def.set_op("_Send");
    AddNodeAttr("T", item->ret_types[i], &def);
    transfer(&def, tensor_name);
    DF_ASSIGN_OR_RETURN(Node * send, graph->AddNode(std::move(def)));
    graph->AddEdge(in->src(), in->src_output(), send, 0);
    graph->RemoveNode(ret);
    DF_RETURN_IF_ERROR(Rendezvous::ParseKey(key(tensor_name), &item->ret_keys[i]));
  }
  for (Node* n : graph->op_nodes()) n->set_assigned_device_name(device_->name());
  FixupSourceAndSinkEdges(graph.get());

  Executor::Params params;
  params.device = device_;
  params.create_kernel = [this](const NodeDef& def) -> absl::StatusOr<std::shared_ptr<OpKernel>> {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        KernelRegistry::Global()->CreateKernel(device_, def, this));
    return std::shared_ptr<OpKernel>(std::move(kernel));
  };
  absl::StatusOr<std::unique_ptr<Executor>> executor =
      Executor::Create(std::move(params), std::move(graph));
  if (!executor.ok()) return errors::Annotate(executor.status(), prefix);
  item->executor = *std::move(executor);
  return item;
}

absl::StatusOr<FunctionLibraryRuntime::Handle> LocalFunctionLibraryRuntime::Instantiate(
    const NameAttrList& func) {
  const std::string key = FunctionInstantiationKey(func);
  {
    absl::MutexLock lock(&mu_);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return it->second;
  }
  // Built outside the lock (building may instantiate nested functions); the
  // first one stored wins.
  DF_ASSIGN_OR_RETURN(std::unique_ptr<Item> item, Build(func));
  absl::MutexLock lock(&mu_);
  auto it = by_key_.find(key);
  if (it != by_key_.end()) return it->second;
  const Handle handle = static_cast<Handle>(items_.size());
  items_.push_back(std::move(item));
  by_key_.emplace(key, handle);
  return handle;
}

const LocalFunctionLibraryRuntime::Item* LocalFunctionLibraryRuntime::Find(Handle handle) const {
  absl::MutexLock lock(&mu_);
  if (handle < 0 || handle >= static_cast<Handle>(items_.size())) return nullptr;
  return items_[handle].get();
}

const DataTypeVector* LocalFunctionLibraryRuntime::arg_types(Handle handle) const {
  const Item* item = Find(handle);
  return item == nullptr ? nullptr : &item->arg_types;
}

const DataTypeVector* LocalFunctionLibraryRuntime::ret_types(Handle handle) const {
  const Item* item = Find(handle);
  return item == nullptr ? nullptr : &item->ret_types;
}

const std::function<void(std::function<void()>)>& LocalFunctionLibraryRuntime::DefaultRunner() {
  absl::MutexLock lock(&mu_);
  if (pool_ == nullptr) {
    pool_ = std::make_unique<ThreadPool>("function_calls", kDefaultCallThreads);
    default_runner_ = [pool = pool_.get()](std::function<void()> fn) {
      pool->Schedule(std::move(fn));
    };
  }
  return default_runner_;
}

void LocalFunctionLibraryRuntime::Run(const CallOptions& options, Handle handle,
                                      std::vector<Tensor> args, std::vector<Tensor>* rets,
                                      DoneCallback done) {
  const Item* item = Find(handle);
  if (item == nullptr) {
    done(errors::InvalidArgument("no function is instantiated with handle ", handle));
    return;
  }
  if (args.size() != item->arg_types.size()) {
    done(errors::InvalidArgument("function '", item->name, "' takes ", item->arg_types.size(),
                                 " arguments but was called with ", args.size()));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != BaseType(item->arg_types[i])) {
      done(errors::InvalidArgument("function '", item->name, "': argument ", i, " must be ",
                                   DataTypeString(item->arg_types[i]), " but is ",
                                   DataTypeString(args[i].dtype())));
      return;
    }
  }
  // What the call keeps alive until the executor is done.
  struct Call {
    RefPtr<Rendezvous> rendezvous{new CallRendezvous};
    CancellationManager own_cancellation;
  };
  auto call = std::make_shared<Call>();
  Rendezvous::Args send_args;
  send_args.device = device_;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::Status s = call->rendezvous->Send(item->arg_keys[i], send_args, args[i], false);
    if (!s.ok()) {
      done(s);
      return;
    }
  }
  Executor::Args exec_args;
  exec_args.step_id = options.step_id;
  exec_args.rendezvous = call->rendezvous.get();
  exec_args.cancellation_manager = options.cancellation_manager != nullptr
                                       ? options.cancellation_manager
                                       : &call->own_cancellation;
  exec_args.runner = options.runner != nullptr ? *options.runner : DefaultRunner();
  item->executor->RunAsync(
      exec_args, [call, item, rets, send_args, done = std::move(done)](const absl::Status& s) {
        if (!s.ok()) {
          done(errors::Annotate(s, absl::StrCat("function '", item->name, "': ")));
          return;
        }
        rets->clear();
        for (size_t i = 0; i < item->ret_keys.size(); ++i) {
          Tensor value;
          bool is_dead = false;
          // Every _Send has run, so the value is there already.
          absl::Status r = call->rendezvous->Recv(item->ret_keys[i], send_args, &value, &is_dead,
                                                  /*timeout_ms=*/1);
          if (r.ok() && is_dead) {
            r = errors::InvalidArgument("function '", item->name, "': result ", i,
                                        " was not produced (it is dead)");
          }
          if (!r.ok()) {
            done(r);
            return;
          }
          rets->push_back(std::move(value));
        }
        done(absl::OkStatus());
      });
}

}  // namespace distflow
