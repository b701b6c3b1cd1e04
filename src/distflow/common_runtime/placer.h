// Assigns every op node of a graph to one device of a DeviceSet.
//
// Rules, applied to colocation groups (nodes that must share a device):
//  * Groups: every "loc:@X" entry of a node's `_class` attr puts the node in
//    group X together with the node named X (when it exists) and every other
//    node listing "loc:@X"; a node consuming a DT_RESOURCE or ref-typed input
//    joins the group of the producer of that input ("resource consumers sit
//    with their resource").
//  * Fixed devices: a node that already has an assigned device, a
//    client-terminated _Send/_Recv (its assigned or requested device), and a
//    stateful node found in `stateful_placements` keep that device; a group
//    whose fixed devices differ is an error naming both nodes and devices.
//  * Requested devices (NodeDef.device, full or partial) of a group's members
//    are merged; conflicting requests are an error naming both nodes, except
//    that with soft placement a conflicting device type or id is dropped.
//  * Only devices whose type has a kernel for every member are candidates
//    (KernelRegistry::SupportedDeviceTypes); client-terminated _Send/_Recv are
//    exempt. When no candidate matches the request, soft placement retries
//    with the device type and id of the request dropped; otherwise, and when
//    that fails too, InvalidArgument names the node and its request.
//  * A group goes to the first candidate matching `default_device` (a
//    partial name; sessions pass their client device) when one does — for a
//    group without a request, and for one whose request that device
//    satisfies — else to the first candidate in the DeviceSet's preference
//    order.
// Afterwards every op node has a full device name in assigned_device_name(),
// and `stateful_placements` (when given) maps the name of every stateful
// node other than _Send/_Recv to its device, so the next run keeps it.
//
// A Placer is used by one thread at a time; the DeviceSet is only read.
#ifndef DISTFLOW_COMMON_RUNTIME_PLACER_H_
#define DISTFLOW_COMMON_RUNTIME_PLACER_H_

#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "distflow/common_runtime/device_set.h"
#include "distflow/graph/graph.h"

namespace distflow {

// Node name -> full device name of stateful nodes placed in earlier runs.
using StatefulPlacements = std::unordered_map<std::string, std::string>;

class Placer {
 public:
  // Borrows `graph`, `devices` and `stateful_placements` (which may be null)
  // until Run returns. REQUIRES: `devices` outlives the Placer.
  Placer(Graph* graph, const DeviceSet* devices, std::string default_device = "",
         bool allow_soft_placement = false, bool log_device_placement = false,
         StatefulPlacements* stateful_placements = nullptr);
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // Places every op node by the rules above. InvalidArgument, naming the
  // node(s) and device(s), when a device name is malformed, a constraint
  // cannot be met, or the device set is empty. On error no assigned device
  // and no stateful placement has been changed.
  absl::Status Run();

 private:
  Graph* const graph_;
  const DeviceSet* const devices_;
  const std::string default_device_;
  const bool allow_soft_placement_;
  const bool log_device_placement_;
  StatefulPlacements* const stateful_placements_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_PLACER_H_
