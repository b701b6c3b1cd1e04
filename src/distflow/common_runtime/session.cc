#include "distflow/common_runtime/session.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/direct_session.h"
#include "distflow/core/logging.h"
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

void RegisterSessionFactory(absl::string_view target_prefix, SessionFactory factory) {
  DF_CHECK(!target_prefix.empty());
  FactoryTable* t = Factories();
  absl::MutexLock l(&t->mu);
  t->by_prefix[std::string(target_prefix)] = std::move(factory);
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  if (options.target.empty()) return NewDirectSession(options);
  SessionFactory factory;
  {
    FactoryTable* t = Factories();
    absl::MutexLock l(&t->mu);
    // The longest matching prefix wins.
    for (const auto& [prefix, f] : t->by_prefix) {
      if (absl::StartsWith(options.target, prefix)) factory = f;
    }
  }
  if (!factory) {
    return errors::NotFound("No session factory accepts target '", options.target,
                            "'; use \"\" for an in-process session");
  }
  return factory(options);
}

}  // namespace distflow
