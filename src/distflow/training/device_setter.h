// ReplicaDeviceSetter: the placement rule of between-graph replication
// (TensorFlow's replica_device_setter). In the returned scope, variable ops
// (VarHandleOp, VariableV2, Variable) are placed on the parameter servers
// round-robin, "/job:ps/task:0", "/job:ps/task:1", ..., in the order they
// are built; ops colocated with a variable (its initializer, optimizer slots
// and updates) follow it; every other op is placed on `worker_device`. The
// placement is recorded in each NodeDef's device field.
//
// The returned scope shares the round-robin counter with scopes derived from
// it; like every Scope, use it from one thread at a time.
#ifndef DISTFLOW_TRAINING_DEVICE_SETTER_H_
#define DISTFLOW_TRAINING_DEVICE_SETTER_H_

#include <string>

#include "distflow/cc/scope.h"

namespace distflow {

// With ps_tasks == 0 every op, variables included, goes to worker_device.
// A negative ps_tasks is recorded as InvalidArgument in the scope.
// `ps_job` names the parameter-server job ("ps" by default).
Scope ReplicaDeviceSetter(const Scope& scope, int ps_tasks, const std::string& worker_device,
                          const std::string& ps_job = "ps");

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_DEVICE_SETTER_H_
