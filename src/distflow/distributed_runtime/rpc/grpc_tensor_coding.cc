#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"

#include <cstring>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/worker.pb.h"

namespace distflow {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

constexpr uint32_t Tag(int field, int wire_type) {
  return static_cast<uint32_t>(field << 3 | wire_type);
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void ReleaseTensor(void* p) { delete static_cast<Tensor*>(p); }

// Reads a protobuf byte stream spread over several slices.
class SliceReader {
 public:
  explicit SliceReader(std::vector<grpc::Slice> slices) : slices_(std::move(slices)) {
    for (const auto& s : slices_) remaining_ += s.size();
  }
  size_t remaining() const { return remaining_; }

  bool ReadByte(uint8_t* b) {
    if (remaining_ == 0) return false;
    Normalize();
    *b = slices_[index_].begin()[offset_];
    Advance(1);
    return true;
  }
  bool ReadVarint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!ReadByte(&b)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  // Copies the next n bytes to dst (which may be null to skip them).
  bool Read(size_t n, char* dst) {
    if (n > remaining_) return false;
    while (n > 0) {
      Normalize();
      const grpc::Slice& s = slices_[index_];
      const size_t take = std::min(n, s.size() - offset_);
      if (dst != nullptr) {
        std::memcpy(dst, s.begin() + offset_, take);
        dst += take;
      }
      Advance(take);
      n -= take;
    }
    return true;
  }

 private:
  void Normalize() {
    while (offset_ == slices_[index_].size()) {
      ++index_;
      offset_ = 0;
    }
  }
  void Advance(size_t n) {
    offset_ += n;
    remaining_ -= n;
  }

  std::vector<grpc::Slice> slices_;
  size_t index_ = 0;
  size_t offset_ = 0;
  size_t remaining_ = 0;
};

absl::Status Malformed(absl::string_view what) {
  return errors::DataLoss("malformed RecvTensorResponse: ", what);
}

bool SkipField(SliceReader* r, int wire_type, size_t* consumed) {
  const size_t before = r->remaining();
  uint64_t v;
  bool ok;
  switch (wire_type) {
    case kVarint:
      ok = r->ReadVarint(&v);
      break;
    case kFixed64:
      ok = r->Read(8, nullptr);
      break;
    case kFixed32:
      ok = r->Read(4, nullptr);
      break;
    case kLengthDelimited:
      ok = r->ReadVarint(&v) && r->Read(v, nullptr);
      break;
    default:
      ok = false;
  }
  *consumed = before - r->remaining();
  return ok;
}

// Decodes a TensorProto of `length` bytes. The fast path handles dtype,
// shape and tensor_content, copying the content straight into the tensor;
// any other field makes it fall back to a regular protobuf parse.
absl::Status DecodeTensor(SliceReader* r, uint64_t length, Tensor* out) {
  std::string raw;  // the whole message, kept only for the fallback
  DataType dtype = DT_INVALID;
  TensorShapeProto shape_proto;
  bool simple = true;
  bool have_content = false;
  Tensor t;
  uint64_t left = length;
  while (left > 0) {
    const size_t start = r->remaining();
    uint64_t tag;
    if (!r->ReadVarint(&tag)) return Malformed("truncated tensor field tag");
    const int field = static_cast<int>(tag >> 3);
    const int wire = static_cast<int>(tag & 7);
    if (field == 1 && wire == kVarint) {
      uint64_t v;
      if (!r->ReadVarint(&v)) return Malformed("truncated dtype");
      dtype = static_cast<DataType>(v);
      PutVarint(&raw, Tag(1, kVarint));
      PutVarint(&raw, v);
    } else if (field == 2 && wire == kLengthDelimited) {
      uint64_t n;
      if (!r->ReadVarint(&n) || n > r->remaining()) return Malformed("truncated tensor shape");
      std::string bytes(n, '\0');
      r->Read(n, bytes.data());
      if (!shape_proto.ParseFromString(bytes)) return Malformed("bad tensor shape");
      PutVarint(&raw, Tag(2, kLengthDelimited));
      PutVarint(&raw, n);
      raw += bytes;
    } else if (field == 4 && wire == kLengthDelimited && simple && dtype != DT_INVALID &&
               dtype != DT_STRING && !have_content) {
      uint64_t n;
      if (!r->ReadVarint(&n) || n > r->remaining()) return Malformed("truncated tensor_content");
      TensorShape shape;
      DF_RETURN_IF_ERROR(errors::Annotate(TensorShape::FromProto(shape_proto, &shape),
                                          "malformed RecvTensorResponse: "));
      if (!DataTypeIsSupported(dtype) || IsRefType(dtype)) {
        return Malformed(absl::StrCat("unsupported dtype ", static_cast<int>(dtype)));
      }
      // Checked: the shape comes off the wire.
      const int64_t want =
          shape.num_elements() < 0 ? -1 : TensorBufferBytes(dtype, shape.num_elements());
      if (want < 0 || n != static_cast<uint64_t>(want)) {
        return Malformed(
            absl::StrCat("tensor_content has ", n, " bytes; a ", DataTypeString(dtype),
                         " tensor of shape ", shape.DebugString(), " needs ",
                         want < 0 ? std::string("more than 2^63") : absl::StrCat(want)));
      }
      DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, shape, &t));
      r->Read(n, static_cast<char*>(t.raw_data()));
      CanonicalizeBools(&t);
      have_content = true;
    } else {
      // Anything else: collect the field's bytes for a regular parse.
      simple = false;
      std::string tag_bytes;
      PutVarint(&tag_bytes, tag);
      raw += tag_bytes;
      uint64_t v;
      switch (wire) {
        case kVarint:
          if (!r->ReadVarint(&v)) return Malformed("truncated varint");
          PutVarint(&raw, v);
          break;
        case kFixed64:
        case kFixed32: {
          const size_t n = wire == kFixed64 ? 8 : 4;
          std::string b(n, '\0');
          if (!r->Read(n, b.data())) return Malformed("truncated fixed field");
          raw += b;
          break;
        }
        case kLengthDelimited: {
          if (!r->ReadVarint(&v) || v > r->remaining()) return Malformed("truncated field");
          PutVarint(&raw, v);
          std::string b(v, '\0');
          r->Read(v, b.data());
          raw += b;
          break;
        }
        default:
          return Malformed(absl::StrCat("bad wire type ", wire));
      }
    }
    const size_t used = start - r->remaining();
    if (used > left) return Malformed("tensor field overruns its message");
    left -= used;
  }
  if (simple && have_content) {
    *out = std::move(t);
    return absl::OkStatus();
  }
  TensorProto proto;
  if (!proto.ParseFromString(raw)) return Malformed("bad tensor");
  return errors::Annotate(TensorFromProto(proto, out), "malformed RecvTensorResponse: ");
}

// Decodes the tensor of a reply that offers a side channel: dtype and
// shape only, checked against the offer's size, into a fresh tensor.
absl::Status DecodeOfferedTensor(SliceReader* r, uint64_t length, const SideChannelOffer& offer,
                                 Tensor* out) {
  std::string bytes(length, '\0');
  if (!r->Read(length, bytes.data())) return Malformed("truncated tensor");
  TensorProto proto;
  if (!proto.ParseFromString(bytes)) return Malformed("bad tensor");
  TensorProto meta;
  meta.set_dtype(proto.dtype());
  *meta.mutable_tensor_shape() = proto.tensor_shape();
  if (meta.ByteSizeLong() != proto.ByteSizeLong()) {
    return Malformed("a tensor offered over the side channel carries content");
  }
  const DataType dtype = proto.dtype();
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype) || DataTypeSize(dtype) == 0) {
    return Malformed(absl::StrCat("dtype ", static_cast<int>(dtype),
                                  " cannot be offered over the side channel"));
  }
  TensorShape shape;
  DF_RETURN_IF_ERROR(errors::Annotate(TensorShape::FromProto(proto.tensor_shape(), &shape),
                                      "malformed RecvTensorResponse: "));
  // Checked: the shape and the size both come off the wire.
  const int64_t want =
      shape.num_elements() < 0 ? -1 : TensorBufferBytes(dtype, shape.num_elements());
  if (want <= 0 || offer.payload_bytes != static_cast<uint64_t>(want)) {
    return Malformed(absl::StrCat("the side channel offers ", offer.payload_bytes, " bytes; a ",
                                  DataTypeString(dtype), " tensor of shape ", shape.DebugString(),
                                  " needs ",
                                  want < 0 ? std::string("more than 2^63") : absl::StrCat(want)));
  }
  return Tensor::Allocate(dtype, shape, out);
}

absl::Status DecodeOffer(SliceReader* r, SideChannelOffer* offer) {
  uint64_t n;
  if (!r->ReadVarint(&n) || n > r->remaining() || n > 1024) {
    return Malformed("truncated side channel offer");
  }
  std::string bytes(n, '\0');
  r->Read(n, bytes.data());
  RecvTensorSideChannel proto;
  if (!proto.ParseFromString(bytes) || proto.payload_bytes() <= 0) {
    return Malformed("bad side channel offer");
  }
  offer->follows = proto.follows();
  if (offer->follows) {
    if (!proto.ticket().empty() || proto.port() != 0) {
      return Malformed("a side channel payload that follows has no ticket and no port");
    }
  } else if (!TicketFromBytes(proto.ticket(), &offer->ticket) || proto.port() <= 0 ||
             proto.port() > 65535) {
    return Malformed("bad side channel offer");
  }
  offer->port = proto.port();
  offer->payload_bytes = static_cast<uint64_t>(proto.payload_bytes());
  return absl::OkStatus();
}

}  // namespace

void CanonicalizeBools(Tensor* tensor) {
  if (tensor->dtype() != DT_BOOL) return;
  auto* bytes = static_cast<unsigned char*>(tensor->raw_data());
  const size_t n = tensor->TotalBytes();
  for (size_t i = 0; i < n; ++i) bytes[i] = bytes[i] != 0;
}

void EncodeRecvTensorOffer(const Tensor& tensor, const SideChannelOffer& offer,
                           int64_t send_start_micros, grpc::ByteBuffer* out) {
  RecvTensorResponse resp;
  RecvTensorSideChannel* side = resp.mutable_side_channel();
  if (offer.follows) {
    side->set_follows(true);
  } else {
    side->set_ticket(TicketBytes(offer.ticket));
    side->set_port(offer.port);
  }
  side->set_payload_bytes(static_cast<int64_t>(offer.payload_bytes));
  // Field 6 first: the reader must know, when it reaches the tensor, that
  // the tensor has no content.
  std::string bytes;
  PutVarint(&bytes, Tag(6, kLengthDelimited));
  PutVarint(&bytes, side->ByteSizeLong());
  bytes += side->SerializeAsString();
  resp.clear_side_channel();
  resp.mutable_tensor()->set_dtype(tensor.dtype());
  tensor.shape().AsProto(resp.mutable_tensor()->mutable_tensor_shape());
  resp.set_send_start_micros(send_start_micros);
  bytes += resp.SerializeAsString();
  grpc::Slice slice(bytes);
  *out = grpc::ByteBuffer(&slice, 1);
}

void EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead, int64_t send_start_micros,
                              grpc::ByteBuffer* out, int side_channel_port) {
  std::string trailer;
  if (side_channel_port > 0) {
    PutVarint(&trailer, Tag(7, kVarint));
    PutVarint(&trailer, static_cast<uint64_t>(side_channel_port));
  }
  if (is_dead) {
    PutVarint(&trailer, Tag(2, kVarint));
    PutVarint(&trailer, 1);
  }
  if (send_start_micros != 0) {
    PutVarint(&trailer, Tag(3, kVarint));
    PutVarint(&trailer, static_cast<uint64_t>(send_start_micros));
  }

  if (is_dead) {
    // A dead tensor has no value: the response is the flags alone.
    grpc::Slice slice(trailer);
    *out = grpc::ByteBuffer(&slice, 1);
    return;
  }
  if (tensor.dtype() == DT_STRING || tensor.NumElements() == 0) {
    RecvTensorResponse resp;
    TensorToProto(tensor, resp.mutable_tensor());
    std::string bytes = resp.SerializeAsString() + trailer;
    grpc::Slice slice(bytes);
    *out = grpc::ByteBuffer(&slice, 1);
    return;
  }

  std::string shape_bytes;
  {
    TensorShapeProto shape;
    tensor.shape().AsProto(&shape);
    shape_bytes = shape.SerializeAsString();
  }
  const size_t content = tensor.TotalBytes();
  std::string inner_head;
  PutVarint(&inner_head, Tag(1, kVarint));
  PutVarint(&inner_head, static_cast<uint64_t>(tensor.dtype()));
  PutVarint(&inner_head, Tag(2, kLengthDelimited));
  PutVarint(&inner_head, shape_bytes.size());
  inner_head += shape_bytes;
  PutVarint(&inner_head, Tag(4, kLengthDelimited));
  PutVarint(&inner_head, content);
  const size_t inner_len = inner_head.size() + content;

  std::string head;
  PutVarint(&head, Tag(1, kLengthDelimited));
  PutVarint(&head, inner_len);
  head += inner_head;

  // The content slice borrows the tensor's buffer; the heap copy of the
  // Tensor keeps the buffer alive until gRPC releases the slice.
  auto* keep = new Tensor(tensor);
  grpc::Slice slices[3] = {
      grpc::Slice(head),
      grpc::Slice(keep->raw_data(), content, ReleaseTensor, keep),
      grpc::Slice(trailer),
  };
  *out = grpc::ByteBuffer(slices, trailer.empty() ? 2 : 3);
}

absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in, Tensor* tensor, bool* is_dead,
                                      int64_t* send_start_micros,
                                      std::optional<SideChannelOffer>* offer,
                                      int* side_channel_port) {
  if (offer != nullptr) offer->reset();
  if (side_channel_port != nullptr) *side_channel_port = 0;
  std::optional<SideChannelOffer> offered;
  std::vector<grpc::Slice> slices;
  if (!in.Dump(&slices).ok()) return Malformed("unreadable buffer");
  SliceReader r(std::move(slices));
  *is_dead = false;
  *send_start_micros = 0;
  bool have_tensor = false;
  while (r.remaining() > 0) {
    uint64_t tag;
    if (!r.ReadVarint(&tag)) return Malformed("truncated field tag");
    const int field = static_cast<int>(tag >> 3);
    const int wire = static_cast<int>(tag & 7);
    uint64_t v;
    if (field == 1 && wire == kLengthDelimited) {
      if (!r.ReadVarint(&v) || v > r.remaining()) return Malformed("truncated tensor");
      DF_RETURN_IF_ERROR(offered.has_value() ? DecodeOfferedTensor(&r, v, *offered, tensor)
                                             : DecodeTensor(&r, v, tensor));
      have_tensor = true;
    } else if (field == 6 && wire == kLengthDelimited) {
      if (offer == nullptr) return Malformed("a side channel offer nobody asked for");
      if (have_tensor || offered.has_value()) {
        return Malformed("the side channel offer must come first, once");
      }
      offered.emplace();
      DF_RETURN_IF_ERROR(DecodeOffer(&r, &*offered));
    } else if (field == 2 && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed("truncated is_dead");
      *is_dead = v != 0;
    } else if (field == 3 && wire == kVarint) {
      if (!r.ReadVarint(&v)) return Malformed("truncated send_start_micros");
      *send_start_micros = static_cast<int64_t>(v);
    } else if (field == 7 && wire == kVarint) {
      if (!r.ReadVarint(&v) || v == 0 || v > 65535) return Malformed("bad side_channel_port");
      if (side_channel_port != nullptr) *side_channel_port = static_cast<int>(v);
    } else {
      size_t consumed;
      if (field == 0 || !SkipField(&r, wire, &consumed)) {
        return Malformed(absl::StrCat("bad field ", field, " with wire type ", wire));
      }
    }
  }
  if (offered.has_value() && (*is_dead || !have_tensor)) {
    return Malformed("a side channel offer without a live tensor");
  }
  if (*is_dead) {
    *tensor = Tensor();
    return absl::OkStatus();
  }
  if (!have_tensor) return Malformed("no tensor");
  if (offer != nullptr) *offer = offered;
  return absl::OkStatus();
}

}  // namespace distflow
