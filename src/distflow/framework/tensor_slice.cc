#include "distflow/framework/tensor_slice.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// TensorFlow's OrderedCode, the three encodings a slice key uses.

// A length byte, then the value big-endian without leading zero bytes.
void AppendNumIncreasing(std::string* out, uint64_t v) {
  char buf[8];
  int n = 0;
  for (; v > 0; v >>= 8) buf[7 - n++] = static_cast<char>(v & 0xff);
  out->push_back(static_cast<char>(n));
  out->append(buf + 8 - n, n);
}

// The bytes with 0x00 written 0x00 0xff and 0xff written 0xff 0x00, then the
// terminator 0x00 0x01.
void AppendOrderedString(std::string* out, absl::string_view s) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
    if (c == '\xff') out->push_back('\0');
  }
  out->append("\0\1", 2);
}

// n bytes hold the two's complement value sign-extended to 8n - n bits,
// with n - 1 leading header bits of the sign's complement and one of the
// sign (flipped by XOR with the header masks below), so that encodings sort
// as the numbers do. n is the fewest bytes that hold the magnitude.
void AppendSignedNumIncreasing(std::string* out, int64_t v) {
  const uint64_t magnitude = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (magnitude < 64) {
    out->push_back(static_cast<char>(0x80 ^ static_cast<uint8_t>(v)));
    return;
  }
  int bits = 0;
  for (uint64_t m = magnitude; m > 0; m >>= 1) ++bits;
  const int n = bits / 7 + 1;  // 7 bits per byte, less one for the sign
  // Header bits per length: n - 1 ones then a zero, across the first two bytes.
  static constexpr uint8_t kHeader[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                             {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                             {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  unsigned char buf[10];
  const unsigned char sign = v < 0 ? 0xff : 0x00;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i)
    buf[2 + i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (56 - 8 * i));
  unsigned char* begin = buf + 10 - n;
  begin[0] ^= kHeader[n][0];
  begin[1] ^= kHeader[n][1];
  out->append(reinterpret_cast<const char*>(begin), n);
}

}  // namespace

TensorSlice::TensorSlice(int dims) : starts_(dims, 0), lengths_(dims, kFullExtent) {}

absl::StatusOr<TensorSlice> TensorSlice::Parse(absl::string_view text) {
  TensorSlice slice;
  if (text.empty()) return slice;
  for (absl::string_view extent : absl::StrSplit(text, ':')) {
    if (extent == "-") {
      slice.starts_.push_back(0);
      slice.lengths_.push_back(kFullExtent);
      continue;
    }
    std::vector<absl::string_view> se = absl::StrSplit(extent, ',');
    int64_t start, length;
    if (se.size() != 2 || !absl::SimpleAtoi(se[0], &start) || !absl::SimpleAtoi(se[1], &length) ||
        start < 0 || length < 0) {
      return errors::InvalidArgument("slice '", text, "' has a bad extent '", extent,
                                     "' (expected '-' or 'start,length')");
    }
    slice.starts_.push_back(start);
    slice.lengths_.push_back(length);
  }
  return slice;
}

absl::StatusOr<TensorSlice> TensorSlice::FromProto(const TensorSliceProto& proto) {
  TensorSlice slice;
  for (const TensorSliceProto::Extent& e : proto.extent()) {
    const bool whole = e.has_length_case() == TensorSliceProto::Extent::HAS_LENGTH_NOT_SET;
    if (e.start() < 0 || (!whole && e.length() < 0)) {
      return errors::InvalidArgument("slice extent has start ", e.start(), " and length ",
                                     e.length());
    }
    slice.starts_.push_back(whole ? 0 : e.start());
    slice.lengths_.push_back(whole ? kFullExtent : e.length());
  }
  return slice;
}

void TensorSlice::ToProto(TensorSliceProto* proto) const {
  proto->Clear();
  for (int d = 0; d < dims(); ++d) {
    TensorSliceProto::Extent* e = proto->add_extent();
    if (!IsFullAt(d)) {
      e->set_start(starts_[d]);
      e->set_length(lengths_[d]);
    }
  }
}

std::string TensorSlice::DebugString() const {
  std::vector<std::string> parts;
  for (int d = 0; d < dims(); ++d) {
    parts.push_back(IsFullAt(d) ? "-" : absl::StrCat(starts_[d], ",", lengths_[d]));
  }
  return absl::StrJoin(parts, ":");
}

absl::Status TensorSlice::CheckFits(const TensorShape& shape) const {
  bool fits = dims() == shape.dims();
  for (int d = 0; fits && d < dims(); ++d) {
    fits = IsFullAt(d) ||
           (starts_[d] <= shape.dim_size(d) && lengths_[d] <= shape.dim_size(d) - starts_[d]);
  }
  if (fits) return absl::OkStatus();
  return errors::InvalidArgument("slice '", DebugString(), "' does not fit shape ",
                                 shape.DebugString());
}

TensorSlice TensorSlice::Resolve(const TensorShape& shape) const {
  TensorSlice out = *this;
  for (int d = 0; d < dims(); ++d) {
    if (IsFullAt(d)) out.lengths_[d] = shape.dim_size(d);
  }
  return out;
}

TensorShape TensorSlice::SliceShape(const TensorShape& shape) const {
  TensorShape out = shape;
  for (int d = 0; d < dims(); ++d) {
    if (!IsFullAt(d)) out.set_dim(d, lengths_[d]);
  }
  return out;
}

bool TensorSlice::Covers(const TensorShape& shape) const { return SliceShape(shape) == shape; }

absl::Status ParseShapeAndSlice(absl::string_view spec, TensorShape* shape, TensorSlice* slice) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  if (parts.size() < 2) {
    return errors::InvalidArgument(
        "shape_and_slice '", spec,
        "' must be 'dim0 dim1 ... slice' (one size per dim, then the slice)");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d;
    if (!absl::SimpleAtoi(parts[i], &d) || d < 0) {
      return errors::InvalidArgument("shape_and_slice '", spec, "' has a bad size '", parts[i],
                                     "'");
    }
    dims.push_back(d);
  }
  DF_RETURN_IF_ERROR(errors::Annotate(TensorShape::BuildTensorShape(dims, shape),
                                      absl::StrCat("shape_and_slice '", spec, "': ")));
  absl::StatusOr<TensorSlice> parsed = TensorSlice::Parse(parts.back());
  if (!parsed.ok()) {
    return errors::InvalidArgument("shape_and_slice '", spec, "': ", parsed.status().message());
  }
  if (parsed->dims() != shape->dims()) {
    return errors::InvalidArgument("shape_and_slice '", spec, "' has ", shape->dims(),
                                   " sizes but ", parsed->dims(), " slice extents");
  }
  DF_RETURN_IF_ERROR(
      errors::Annotate(parsed->CheckFits(*shape), absl::StrCat("shape_and_slice '", spec, "': ")));
  *slice = *std::move(parsed);
  return absl::OkStatus();
}

std::string SliceKey(absl::string_view name, const TensorSlice& slice) {
  std::string key;
  AppendNumIncreasing(&key, 0);
  AppendOrderedString(&key, name);
  AppendNumIncreasing(&key, static_cast<uint64_t>(slice.dims()));
  for (int d = 0; d < slice.dims(); ++d) {
    AppendSignedNumIncreasing(&key, slice.start(d));
    AppendSignedNumIncreasing(&key, slice.length(d));
  }
  return key;
}

int64_t OverlapElements(const TensorSlice& a, const TensorSlice& b) {
  int64_t total = 1;
  for (int d = 0; d < a.dims(); ++d) {
    const int64_t lo = std::max(a.start(d), b.start(d));
    const int64_t hi = std::min(a.start(d) + a.length(d), b.start(d) + b.length(d));
    if (hi <= lo) return 0;
    total *= hi - lo;
  }
  return total;
}

int64_t CopySliceOverlap(const Tensor& src, const TensorSlice& src_box, const TensorSlice& dst_box,
                         Tensor* dst) {
  const int64_t total = OverlapElements(src_box, dst_box);
  if (total == 0) return 0;
  const int rank = src_box.dims();
  std::vector<int64_t> lo(rank), hi(rank);
  for (int d = 0; d < rank; ++d) {
    lo[d] = std::max(src_box.start(d), dst_box.start(d));
    hi[d] = std::min(src_box.start(d) + src_box.length(d), dst_box.start(d) + dst_box.length(d));
  }
  // Row-major strides of each box; the last dimension's run is contiguous.
  std::vector<int64_t> src_stride(rank, 1), dst_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) {
    src_stride[d] = src_stride[d + 1] * src_box.length(d + 1);
    dst_stride[d] = dst_stride[d + 1] * dst_box.length(d + 1);
  }
  const int64_t run = rank == 0 ? 1 : hi[rank - 1] - lo[rank - 1];
  const bool strings = src.dtype() == DT_STRING;
  const size_t elem = strings ? 0 : static_cast<size_t>(DataTypeSize(src.dtype()));
  std::vector<int64_t> at = lo;  // the first element of the current run
  for (int64_t copied = 0; copied < total; copied += run) {
    int64_t s = 0, t = 0;
    for (int d = 0; d < rank; ++d) {
      s += (at[d] - src_box.start(d)) * src_stride[d];
      t += (at[d] - dst_box.start(d)) * dst_stride[d];
    }
    if (strings) {
      const std::string* from = src.base<std::string>() + s;
      std::copy(from, from + run, dst->base<std::string>() + t);
    } else {
      std::memcpy(static_cast<char*>(dst->raw_data()) + t * elem,
                  static_cast<const char*>(src.raw_data()) + s * elem, run * elem);
    }
    // Advance to the next run: odometer over all but the last dimension.
    for (int d = rank - 2; d >= 0; --d) {
      if (++at[d] < hi[d]) break;
      at[d] = lo[d];
    }
  }
  return total;
}

}  // namespace distflow
