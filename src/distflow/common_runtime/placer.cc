#include "distflow/common_runtime/placer.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

constexpr char kColocationAttr[] = "_class";
constexpr absl::string_view kColocationPrefix = "loc:@";

// What one node asks of placement.
struct Member {
  Node* node = nullptr;
  bool has_request = false;
  ParsedDeviceName request;
  // A device the node must keep, and why.
  const DeviceAttributes* fixed = nullptr;
  std::string fixed_reason;
  // Client-terminated _Send/_Recv: no kernel check.
  bool exempt = false;
  std::vector<std::string> supported_types;
};

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  // The smaller root wins, so a group's root is its first node.
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

bool IsClientTerminatedSendRecv(const Node* n) {
  if (!n->IsSend() && !n->IsRecv()) return false;
  bool client_terminated = false;
  return GetNodeAttr(n->attrs(), "client_terminated", &client_terminated).ok() && client_terminated;
}

std::string Describe(const Node* n) { return FormatNodeForError(n->def()); }

std::string TypeList(const std::vector<std::string>& types) {
  return absl::StrCat("[", absl::StrJoin(types, ", "), "]");
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Places one colocation group.
class GroupPlacer {
 public:
  GroupPlacer(const DeviceSet& devices, const ParsedDeviceName* default_spec,
              bool allow_soft_placement)
      : devices_(devices), default_spec_(default_spec), soft_(allow_soft_placement) {}

  absl::StatusOr<const DeviceAttributes*> Place(const std::vector<const Member*>& group) {
    first_ = group.front();
    DF_RETURN_IF_ERROR(MergeRequests(group));
    DF_RETURN_IF_ERROR(MergeFixed(group));
    DF_RETURN_IF_ERROR(IntersectTypes(group));
    if (fixed_ != nullptr) return CheckFixed();
    return Choose();
  }

 private:
  absl::Status MergeRequests(const std::vector<const Member*>& group) {
    for (const Member* m : group) {
      if (!m->has_request) continue;
      if (requester_ == nullptr) {
        requester_ = m;
        request_ = m->request;
        continue;
      }
      if (!device_name::Merge(&request_, m->request, soft_).ok()) {
        const Member* other = requester_;
        for (const Member* g : group) {
          if (g->has_request && g != m && !device_name::AreCompatible(g->request, m->request)) {
            other = g;
            break;
          }
        }
        return errors::InvalidArgument("cannot colocate ", Describe(other->node),
                                       " requesting device '", other->node->requested_device(),
                                       "' with ", Describe(m->node), " requesting device '",
                                       m->node->requested_device(), "': the requests conflict");
      }
    }
    return absl::OkStatus();
  }

  absl::Status MergeFixed(const std::vector<const Member*>& group) {
    for (const Member* m : group) {
      if (m->fixed == nullptr) continue;
      if (fixed_member_ == nullptr) {
        fixed_member_ = m;
        fixed_ = m->fixed;
      } else if (m->fixed != fixed_) {
        return errors::InvalidArgument("cannot colocate ", Describe(fixed_member_->node),
                                       ", which ", fixed_member_->fixed_reason, " '",
                                       fixed_->name(), "', with ", Describe(m->node), ", which ",
                                       m->fixed_reason, " '", m->fixed->name(), "'");
      }
    }
    return absl::OkStatus();
  }

  absl::Status IntersectTypes(const std::vector<const Member*>& group) {
    bool first = true;
    for (const Member* m : group) {
      if (m->exempt) continue;
      if (m->supported_types.empty()) {
        return errors::InvalidArgument("no kernel is registered for ", Describe(m->node),
                                       " on any device type");
      }
      if (first) {
        types_ = m->supported_types;
        first = false;
      } else {
        std::vector<std::string> kept;
        for (const std::string& t : types_) {
          if (Contains(m->supported_types, t)) kept.push_back(t);
        }
        types_ = std::move(kept);
      }
    }
    all_exempt_ = first;
    if (!all_exempt_ && types_.empty()) {
      std::vector<std::string> parts;
      for (const Member* m : group) {
        if (m->exempt) continue;
        parts.push_back(
            absl::StrCat(Describe(m->node), " has kernels for ", TypeList(m->supported_types)));
      }
      return errors::InvalidArgument(
          "no device type has kernels for every node of a colocation group: ",
          absl::StrJoin(parts, "; "));
    }
    return absl::OkStatus();
  }

  bool TypeSupported(const DeviceAttributes* d) const {
    return all_exempt_ || Contains(types_, d->device_type());
  }

  absl::StatusOr<const DeviceAttributes*> CheckFixed() const {
    if (!TypeSupported(fixed_)) {
      return errors::InvalidArgument(
          Describe(fixed_member_->node), " ", fixed_member_->fixed_reason, " '", fixed_->name(),
          "', but its colocation group has kernels only for ", TypeList(types_));
    }
    if (requester_ != nullptr && !soft_ &&
        !device_name::Matches(request_, devices_.parsed_name(fixed_))) {
      const std::string holder =
          fixed_member_ == requester_
              ? std::string("it")
              : absl::StrCat("the colocated ", Describe(fixed_member_->node));
      return errors::InvalidArgument(Describe(requester_->node), " requests device '",
                                     requester_->node->requested_device(), "' but ", holder, " ",
                                     fixed_member_->fixed_reason, " '", fixed_->name(), "'");
    }
    return fixed_;
  }

  std::vector<const DeviceAttributes*> Candidates(const ParsedDeviceName& spec) const {
    std::vector<const DeviceAttributes*> out;
    for (const DeviceAttributes* d : devices_.FindMatchingDevices(spec)) {
      if (TypeSupported(d)) out.push_back(d);
    }
    return out;
  }

  absl::StatusOr<const DeviceAttributes*> Choose() const {
    std::vector<const DeviceAttributes*> candidates = Candidates(request_);
    if (candidates.empty() && requester_ != nullptr && soft_) {
      ParsedDeviceName relaxed = request_;
      relaxed.has_type = false;
      relaxed.has_id = false;
      candidates = Candidates(relaxed);
    }
    if (candidates.empty()) return NoCandidate();
    // The default device wins among the candidates whenever it fits: for a
    // group with no request, and for a partial request it satisfies (a
    // "/device:CPU:0" or "/job:worker" on the worker whose master runs).
    if (default_spec_ != nullptr) {
      for (const DeviceAttributes* d : candidates) {
        if (device_name::Matches(*default_spec_, devices_.parsed_name(d))) {
          return d;
        }
      }
    }
    return candidates.front();
  }

  absl::Status NoCandidate() const {
    const std::string available = absl::StrJoin(devices_.DeviceNames(), ", ");
    if (requester_ == nullptr) {
      return errors::InvalidArgument("no device can run the colocation group of ",
                                     Describe(group_node()), ": it has kernels for ",
                                     TypeList(types_), " and the available devices are [",
                                     available, "]");
    }
    std::string who = absl::StrCat(Describe(requester_->node), " was explicitly assigned to '",
                                   requester_->node->requested_device(), "'");
    if (!(request_ == requester_->request)) {
      absl::StrAppend(&who, " ('", device_name::ToString(request_),
                      "' with the requests of its colocated nodes)");
    }
    if (devices_.FindMatchingDevices(request_).empty()) {
      return errors::InvalidArgument(who, " but no such device exists; available devices: [",
                                     available, "]");
    }
    return errors::InvalidArgument(
        who, " but kernels for it and the nodes colocated with it exist only for ",
        TypeList(types_), "; soft placement would pick another device");
  }

  const Node* group_node() const {
    return fixed_member_ != nullptr ? fixed_member_->node : first_->node;
  }

  const DeviceSet& devices_;
  const ParsedDeviceName* default_spec_;
  const bool soft_;
  const Member* first_ = nullptr;
  const Member* requester_ = nullptr;
  ParsedDeviceName request_;
  const Member* fixed_member_ = nullptr;
  const DeviceAttributes* fixed_ = nullptr;
  std::vector<std::string> types_;
  bool all_exempt_ = false;
};

}  // namespace

Placer::Placer(Graph* graph, const DeviceSet* devices, std::string default_device,
               bool allow_soft_placement, bool log_device_placement,
               StatefulPlacements* stateful_placements)
    : graph_(graph),
      devices_(devices),
      default_device_(std::move(default_device)),
      allow_soft_placement_(allow_soft_placement),
      log_device_placement_(log_device_placement),
      stateful_placements_(stateful_placements) {}

absl::Status Placer::Run() {
  if (devices_->empty()) {
    return errors::InvalidArgument("cannot place the graph: no devices");
  }
  ParsedDeviceName default_spec;
  if (!device_name::Parse(default_device_, &default_spec)) {
    return errors::InvalidArgument("default device '", default_device_,
                                   "' is not a valid device name");
  }
  const std::vector<Node*> nodes = graph_->op_nodes();
  std::vector<Member> members(graph_->num_node_ids());
  absl::flat_hash_map<std::string, Node*> by_name;
  for (Node* n : nodes) by_name[n->name()] = n;

  for (Node* n : nodes) {
    Member& m = members[n->id()];
    m.node = n;
    if (!device_name::Parse(n->requested_device(), &m.request)) {
      return errors::InvalidArgument(Describe(n), " requests malformed device '",
                                     n->requested_device(), "'");
    }
    m.has_request = !n->requested_device().empty();
    m.exempt = IsClientTerminatedSendRecv(n);
    std::string fixed_name;
    if (m.exempt) {
      fixed_name =
          n->assigned_device_name().empty() ? n->requested_device() : n->assigned_device_name();
      m.fixed_reason = "is a client-terminated transfer on";
      m.has_request = false;
    } else if (!n->assigned_device_name().empty()) {
      fixed_name = n->assigned_device_name();
      m.fixed_reason = "is already assigned to";
    } else if (stateful_placements_ != nullptr && n->IsStateful()) {
      auto it = stateful_placements_->find(n->name());
      if (it != stateful_placements_->end()) {
        fixed_name = it->second;
        m.fixed_reason = "is stateful and was placed in an earlier run on";
      }
    }
    if (!fixed_name.empty() || m.exempt) {
      m.fixed = devices_->FindDeviceByName(fixed_name);
      if (m.fixed == nullptr) {
        return errors::InvalidArgument(Describe(n), " ", m.fixed_reason, " '", fixed_name,
                                       "', which is not an available device");
      }
    }
    if (!m.exempt) {
      m.supported_types = KernelRegistry::Global()->SupportedDeviceTypes(n->def());
    }
  }

  UnionFind groups(graph_->num_node_ids());
  absl::flat_hash_map<std::string, int> class_root;  // group name -> node id
  for (Node* n : nodes) {
    const AttrValue* classes = n->attrs().Find(kColocationAttr);
    if (classes == nullptr) continue;
    if (classes->value_case() != AttrValue::kList) {
      return errors::InvalidArgument(Describe(n), " has a '", kColocationAttr,
                                     "' attr that is not a list of strings");
    }
    for (const std::string& spec : classes->list().s()) {
      absl::string_view group = spec;
      if (!absl::ConsumePrefix(&group, kColocationPrefix)) continue;
      auto [it, inserted] = class_root.emplace(std::string(group), n->id());
      groups.Union(it->second, n->id());
      if (auto named = by_name.find(group); named != by_name.end()) {
        groups.Union(named->second->id(), n->id());
      }
    }
  }
  for (Node* n : nodes) {
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge() || !e->src()->IsOp()) continue;
      const DataType t = n->input_type(e->dst_input());
      if (t == DT_RESOURCE || IsRefType(t)) groups.Union(e->src()->id(), n->id());
    }
  }

  absl::flat_hash_map<int, std::vector<const Member*>> by_group;
  std::vector<int> roots;
  for (Node* n : nodes) {
    const int root = groups.Find(n->id());
    auto& group = by_group[root];
    if (group.empty()) roots.push_back(root);
    group.push_back(&members[n->id()]);
  }
  std::vector<std::pair<Node*, const DeviceAttributes*>> placement;
  placement.reserve(nodes.size());
  for (int root : roots) {
    const std::vector<const Member*>& group = by_group[root];
    GroupPlacer placer(*devices_, default_device_.empty() ? nullptr : &default_spec,
                       allow_soft_placement_);
    DF_ASSIGN_OR_RETURN(const DeviceAttributes* device, placer.Place(group));
    for (const Member* m : group) placement.emplace_back(m->node, device);
  }

  for (const auto& [node, device] : placement) {
    node->set_assigned_device_name(device->name());
    if (stateful_placements_ != nullptr && node->IsStateful() && !node->IsSend() &&
        !node->IsRecv()) {
      (*stateful_placements_)[node->name()] = device->name();
    }
    if (log_device_placement_) {
      internal::LogLine(
          'I', absl::StrCat(node->name(), ": (", node->type_string(), "): ", device->name()));
    }
  }
  return absl::OkStatus();
}

}  // namespace distflow
