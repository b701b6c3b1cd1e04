#include "distflow/distributed_runtime/transfer_stats.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace distflow {
namespace {

// At most this many (peer, transport, direction) rows are kept: peer names
// come from rendezvous keys, which a stranger may choose. Later new peers
// are counted under "other".
constexpr size_t kMaxRows = 1024;

struct Key {
  std::string peer;
  TensorTransport transport;
  bool sent;
  bool operator==(const Key& o) const {
    return sent == o.sent && transport == o.transport && peer == o.peer;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.peer, static_cast<int>(k.transport), k.sent);
  }
};

struct Counts {
  int64_t tensors = 0;
  int64_t bytes = 0;
};

struct Table {
  absl::Mutex mu;
  absl::flat_hash_map<Key, Counts> rows ABSL_GUARDED_BY(mu);
};

Table& Transfers() {
  static Table* table = new Table;
  return *table;
}

}  // namespace

const char* TensorTransportName(TensorTransport t) {
  switch (t) {
    case TensorTransport::kGrpc:
      return "grpc";
    case TensorTransport::kSideChannel:
      return "side_channel";
    case TensorTransport::kVerbs:
      return "verbs";
  }
  return "unknown";
}

std::string TaskOfDevice(absl::string_view device) {
  const size_t at = device.find("/device:");
  return std::string(at == absl::string_view::npos ? device : device.substr(0, at));
}

void CountTensorTransfer(bool sent, TensorTransport transport, absl::string_view peer_task,
                         int64_t bytes) {
  Table& t = Transfers();
  Key key{std::string(peer_task), transport, sent};
  absl::MutexLock lock(&t.mu);
  auto it = t.rows.find(key);
  if (it == t.rows.end()) {
    if (t.rows.size() >= kMaxRows) key.peer = "other";
    it = t.rows.try_emplace(std::move(key)).first;
  }
  ++it->second.tensors;
  it->second.bytes += std::max<int64_t>(bytes, 0);
}

std::vector<TensorTransferRow> TensorTransfers() {
  std::vector<TensorTransferRow> rows;
  {
    Table& t = Transfers();
    absl::MutexLock lock(&t.mu);
    for (const auto& [k, c] : t.rows) {
      rows.push_back({k.peer, TensorTransportName(k.transport), k.sent, c.tensors, c.bytes});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const TensorTransferRow& a, const TensorTransferRow& b) {
    return std::tie(a.peer, a.transport, a.sent) < std::tie(b.peer, b.transport, b.sent);
  });
  return rows;
}

}  // namespace distflow
