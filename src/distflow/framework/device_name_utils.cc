#include "distflow/framework/device_name_utils.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distflow/core/status.h"

namespace distflow {

bool ParsedDeviceName::operator==(const ParsedDeviceName& o) const {
  return has_job == o.has_job && job == o.job && has_replica == o.has_replica &&
         replica == o.replica && has_task == o.has_task && task == o.task &&
         has_type == o.has_type && type == o.type && has_id == o.has_id && id == o.id;
}

namespace device_name {
namespace {

bool ParseInt(absl::string_view s, int* out) {
  return !s.empty() && absl::ascii_isdigit(s[0]) && absl::SimpleAtoi(s, out) && *out >= 0;
}

bool ValidJobName(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(s[0])) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || c == '_' || c == '-')) return false;
  }
  return true;
}

bool ValidType(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(absl::ascii_isalpha(c) || c == '_')) return false;
  }
  return true;
}

// "TYPE:ID" or "TYPE:*" or "TYPE".
bool ParseTypeAndId(absl::string_view type, absl::string_view id, bool has_id_part,
                    ParsedDeviceName* out) {
  if (!ValidType(type)) return false;
  out->has_type = true;
  out->type = absl::AsciiStrToUpper(type);
  if (!has_id_part || id == "*") {
    out->has_id = false;
    return true;
  }
  out->has_id = ParseInt(id, &out->id);
  return out->has_id;
}

}  // namespace

bool Parse(absl::string_view name, ParsedDeviceName* out) {
  *out = ParsedDeviceName();
  if (name.empty() || name == "/") return true;
  if (name[0] != '/') return false;
  std::vector<absl::string_view> parts = absl::StrSplit(name.substr(1), '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::string_view p = parts[i];
    std::vector<absl::string_view> kv = absl::StrSplit(p, ':');
    if (kv.empty() || kv[0].empty()) return false;
    if (kv[0] == "job" && kv.size() == 2 && !out->has_job) {
      if (kv[1] == "*") continue;
      if (!ValidJobName(kv[1])) return false;
      out->has_job = true;
      out->job = std::string(kv[1]);
    } else if (kv[0] == "replica" && kv.size() == 2 && !out->has_replica) {
      if (kv[1] == "*") continue;
      if (!ParseInt(kv[1], &out->replica)) return false;
      out->has_replica = true;
    } else if (kv[0] == "task" && kv.size() == 2 && !out->has_task) {
      if (kv[1] == "*") continue;
      if (!ParseInt(kv[1], &out->task)) return false;
      out->has_task = true;
    } else if (kv[0] == "device" && !out->has_type) {
      if (kv.size() == 3) {
        if (!ParseTypeAndId(kv[1], kv[2], true, out)) return false;
      } else if (kv.size() == 2) {
        if (kv[1] == "*") continue;
        if (!ParseTypeAndId(kv[1], "", false, out)) return false;
      } else {
        return false;
      }
    } else if (kv.size() == 2 && !out->has_type && i + 1 == parts.size() &&
               (absl::EqualsIgnoreCase(kv[0], "cpu") || absl::EqualsIgnoreCase(kv[0], "gpu"))) {
      // Legacy "/cpu:0".
      if (!ParseTypeAndId(kv[0], kv[1], true, out)) return false;
    } else {
      return false;
    }
  }
  return true;
}

absl::Status ParseOrError(absl::string_view name, ParsedDeviceName* out) {
  if (!Parse(name, out)) {
    return errors::InvalidArgument("malformed device name '", name,
                                   "' (expected /job:J/replica:R/task:T/device:TYPE:ID)");
  }
  return absl::OkStatus();
}

std::string ToString(const ParsedDeviceName& n) {
  std::string s;
  if (n.has_job) absl::StrAppend(&s, "/job:", n.job);
  if (n.has_replica) absl::StrAppend(&s, "/replica:", n.replica);
  if (n.has_task) absl::StrAppend(&s, "/task:", n.task);
  if (n.has_type) {
    absl::StrAppend(&s, "/device:", n.type, ":");
    if (n.has_id) {
      absl::StrAppend(&s, n.id);
    } else {
      s += "*";
    }
  }
  return s;
}

std::string FullName(absl::string_view job, int replica, int task, absl::string_view type, int id) {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task, "/device:", type, ":",
                      id);
}

bool IsFullySpecified(const ParsedDeviceName& n) {
  return n.has_job && n.has_replica && n.has_task && n.has_type && n.has_id;
}

bool Matches(const ParsedDeviceName& p, const ParsedDeviceName& n) {
  if (p.has_job && (!n.has_job || p.job != n.job)) return false;
  if (p.has_replica && (!n.has_replica || p.replica != n.replica)) return false;
  if (p.has_task && (!n.has_task || p.task != n.task)) return false;
  if (p.has_type && (!n.has_type || p.type != n.type)) return false;
  if (p.has_id && (!n.has_id || p.id != n.id)) return false;
  return true;
}

bool AreCompatible(const ParsedDeviceName& a, const ParsedDeviceName& b) {
  if (a.has_job && b.has_job && a.job != b.job) return false;
  if (a.has_replica && b.has_replica && a.replica != b.replica) return false;
  if (a.has_task && b.has_task && a.task != b.task) return false;
  if (a.has_type && b.has_type && a.type != b.type) return false;
  if (a.has_id && b.has_id && a.id != b.id) return false;
  return true;
}

absl::Status Merge(ParsedDeviceName* t, const ParsedDeviceName& o, bool allow_soft_placement) {
  auto conflict = [&](const char* part) {
    return errors::InvalidArgument("cannot merge devices with incompatible ", part, "s: '",
                                   ToString(*t), "' and '", ToString(o), "'");
  };
  if (o.has_job) {
    if (t->has_job && t->job != o.job) return conflict("job");
    t->has_job = true;
    t->job = o.job;
  }
  if (o.has_replica) {
    if (t->has_replica && t->replica != o.replica) return conflict("replica");
    t->has_replica = true;
    t->replica = o.replica;
  }
  if (o.has_task) {
    if (t->has_task && t->task != o.task) return conflict("task");
    t->has_task = true;
    t->task = o.task;
  }
  if (o.has_type) {
    if (t->has_type && t->type != o.type) {
      if (!allow_soft_placement) return conflict("type");
    } else {
      t->has_type = true;
      t->type = o.type;
    }
  }
  if (o.has_id) {
    if (t->has_id && t->id != o.id) {
      if (!allow_soft_placement) return conflict("id");
    } else if (!t->has_type || !o.has_type || t->type == o.type) {
      t->has_id = true;
      t->id = o.id;
    }
  }
  return absl::OkStatus();
}

std::string TaskName(const ParsedDeviceName& n) {
  return absl::StrCat("/job:", n.job, "/replica:", n.replica, "/task:", n.task);
}

bool IsSameAddressSpace(absl::string_view a, absl::string_view b) {
  ParsedDeviceName pa, pb;
  if (!Parse(a, &pa) || !Parse(b, &pb)) return false;
  return pa.has_job && pb.has_job && pa.job == pb.job && pa.has_replica && pb.has_replica &&
         pa.replica == pb.replica && pa.has_task && pb.has_task && pa.task == pb.task;
}

}  // namespace device_name
}  // namespace distflow
