// What the parts of one worker share: its task name, its devices, the
// clients of its peers, its per-step rendezvous and its inter-op pool. The
// server owns every pointee and keeps it alive while the worker runs.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_ENV_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_ENV_H_

#include <memory>
#include <string>

#include "distflow/distributed_runtime/worker_cache.h"

namespace distflow {

class DeviceMgr;
class RendezvousMgr;
class ThreadPool;

struct WorkerEnv {
  std::string task_name;  // "/job:J/replica:0/task:T"
  DeviceMgr* device_mgr = nullptr;
  // The workers of the cluster the server was started with.
  std::shared_ptr<WorkerCache> worker_cache;
  // Makes the worker cache of a cluster a session brings.
  WorkerCacheFactory worker_cache_factory;
  RendezvousMgr* rendezvous_mgr = nullptr;
  ThreadPool* compute_pool = nullptr;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_ENV_H_
