#include "distflow/common_runtime/session.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

struct FactoryTable {
  absl::Mutex mu;
  std::map<std::string, SessionFactory> by_prefix ABSL_GUARDED_BY(mu);
};

FactoryTable* Factories() {
  static FactoryTable* table = new FactoryTable;
  return table;
}

}  // namespace

absl::Status SessionClosedError() { return errors::Cancelled("Session has been closed"); }

absl::Status Session::CancelRunningSteps() {
  return errors::Unimplemented("this session cannot cancel its running steps");
}

void RegisterSessionFactory(absl::string_view target_prefix, SessionFactory factory) {
  FactoryTable* t = Factories();
  absl::MutexLock l(&t->mu);
  t->by_prefix[std::string(target_prefix)] = std::move(factory);
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  SessionFactory factory;
  {
    FactoryTable* t = Factories();
    absl::MutexLock l(&t->mu);
    if (options.target.empty()) {
      auto it = t->by_prefix.find("");
      if (it != t->by_prefix.end()) factory = it->second;
    } else {
      // The longest matching prefix wins (the map is sorted, so a prefix
      // comes before the longer ones that start with it).
      for (const auto& [prefix, f] : t->by_prefix) {
        if (!prefix.empty() && absl::StartsWith(options.target, prefix)) factory = f;
      }
    }
  }
  if (!factory) {
    return errors::NotFound("No session factory accepts target '", options.target,
                            "'; use \"\" for an in-process session");
  }
  return factory(options);
}

}  // namespace distflow
