// What a kernel may know about the device it runs on: its name and type, the
// intra-op thread pool for kernels that parallelise, and (later) the device's
// resource manager. The runtime's Device derives from this.
#ifndef DISTFLOW_FRAMEWORK_DEVICE_BASE_H_
#define DISTFLOW_FRAMEWORK_DEVICE_BASE_H_

#include <string>

namespace distflow {

class ThreadPool;
class ResourceMgr;

class DeviceBase {
 public:
  virtual ~DeviceBase() = default;
  // Full name, e.g. "/job:localhost/replica:0/task:0/device:CPU:0".
  virtual const std::string& name() const = 0;
  // "CPU".
  virtual const std::string& device_type() const = 0;
  // Pool for intra-op parallelism; nullptr means run single-threaded.
  virtual ThreadPool* intra_op_threadpool() const { return nullptr; }
  // Holds stateful resources (variables, queues) across steps; may be null.
  virtual ResourceMgr* resource_manager() const { return nullptr; }
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_DEVICE_BASE_H_
