#include "distflow/framework/rendezvous.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

bool ParseHex64(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
    const int digit = absl::ascii_isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : absl::ascii_tolower(c) - 'a' + 10;
    v = (v << 4) | static_cast<uint64_t>(digit);
  }
  *out = v;
  return true;
}

bool ParseFrameIter(absl::string_view s, FrameAndIter* out) {
  const size_t colon = s.find(':');
  if (colon == absl::string_view::npos) return false;
  absl::string_view frame = s.substr(0, colon);
  absl::string_view iter = s.substr(colon + 1);
  // SimpleAtoi tolerates whitespace and signs; a key holds plain digits.
  auto digits_only = [](absl::string_view v) {
    if (v.empty()) return false;
    for (char c : v) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  return digits_only(frame) && digits_only(iter) && absl::SimpleAtoi(frame, &out->frame_id) &&
         absl::SimpleAtoi(iter, &out->iter_id);
}

}  // namespace

Rendezvous::ParsedKey& Rendezvous::ParsedKey::operator=(const ParsedKey& other) {
  if (this == &other) return *this;
  buf_ = other.buf_;
  const char* old_base = other.buf_.data();
  auto rebase = [&](absl::string_view v) {
    return absl::string_view(buf_.data() + (v.data() - old_base), v.size());
  };
  src_device = rebase(other.src_device);
  dst_device = rebase(other.dst_device);
  edge_name = rebase(other.edge_name);
  src = other.src;
  dst = other.dst;
  src_incarnation = other.src_incarnation;
  frame_iter = other.frame_iter;
  hash_ = other.hash_;
  return *this;
}

std::string Rendezvous::CreateKey(absl::string_view src_device, uint64_t src_incarnation,
                                  absl::string_view dst_device, absl::string_view name,
                                  const FrameAndIter& frame_iter) {
  return absl::StrFormat("%s;%016x;%s;%s;%d:%d", src_device, src_incarnation, dst_device, name,
                         frame_iter.frame_id, frame_iter.iter_id);
}

absl::Status Rendezvous::ParseKey(absl::string_view key, ParsedKey* out) {
  out->buf_.assign(key.data(), key.size());
  const absl::string_view buf = out->buf_;
  const std::vector<absl::string_view> parts = absl::StrSplit(buf, ';');
  auto invalid = [&](absl::string_view why) {
    return errors::InvalidArgument("Invalid rendezvous key '", key, "': ", why);
  };
  if (parts.size() != 5) {
    return invalid(
        "expected src_device;src_incarnation;dst_device;tensor_name;"
        "frame_id:iter_id");
  }
  if (parts[0].empty() || !device_name::Parse(parts[0], &out->src)) {
    return invalid("malformed source device");
  }
  if (!ParseHex64(parts[1], &out->src_incarnation)) {
    return invalid("the source incarnation is not a 64-bit hex number");
  }
  if (parts[2].empty() || !device_name::Parse(parts[2], &out->dst)) {
    return invalid("malformed destination device");
  }
  if (parts[3].empty()) return invalid("empty tensor name");
  if (!ParseFrameIter(parts[4], &out->frame_iter)) {
    return invalid("the frame and iteration are not 'frame_id:iter_id'");
  }
  out->src_device = parts[0];
  out->dst_device = parts[2];
  out->edge_name = parts[3];
  out->hash_ = absl::Hash<absl::string_view>{}(buf);
  return absl::OkStatus();
}

absl::Status Rendezvous::Recv(const ParsedKey& key, const Args& args, Tensor* value, bool* is_dead,
                              int64_t timeout_ms) {
  // Shared with the callback, which may outlive this call after a timeout.
  struct State {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
    Tensor value ABSL_GUARDED_BY(mu);
    bool is_dead ABSL_GUARDED_BY(mu) = false;
  };
  auto state = std::make_shared<State>();
  RecvAsync(key, args,
            [state](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool dead) {
              absl::MutexLock l(&state->mu);
              state->status = s;
              state->value = v;
              state->is_dead = dead;
              state->done = true;
            });
  absl::MutexLock l(&state->mu);
  const absl::Condition done(&state->done);
  if (timeout_ms > 0) {
    if (!state->mu.AwaitWithTimeout(done, absl::Milliseconds(timeout_ms))) {
      return errors::DeadlineExceeded("Timed out after ", timeout_ms,
                                      " ms waiting for rendezvous key '", key.FullKey(), "'");
    }
  } else {
    state->mu.Await(done);
  }
  if (!state->status.ok()) return state->status;
  *value = std::move(state->value);
  *is_dead = state->is_dead;
  return absl::OkStatus();
}

std::string DescribePendingReceives(std::vector<std::string> keys) {
  if (keys.empty()) return "waiting for no tensor (a kernel is still running)";
  constexpr size_t kMaxNamed = 8;
  std::sort(keys.begin(), keys.end());
  std::string out = "waiting for ";
  for (size_t i = 0; i < keys.size() && i < kMaxNamed; ++i) {
    if (i > 0) out += ", ";
    Rendezvous::ParsedKey key;
    if (!Rendezvous::ParseKey(keys[i], &key).ok()) {
      absl::StrAppend(&out, "key '", keys[i], "'");
      continue;
    }
    absl::StrAppend(&out, "tensor '", key.edge_name, "' from ", key.src_device, " (to ",
                    key.dst_device, ")");
  }
  if (keys.size() > kMaxNamed) absl::StrAppend(&out, " and ", keys.size() - kMaxNamed, " more");
  return out;
}

absl::Status DeadFetchError(absl::string_view name) {
  return errors::InvalidArgument("fetch '", name, "' produced no value (it is dead)");
}

}  // namespace distflow
