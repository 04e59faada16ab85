// Element-type-agnostic data movement for the tensor kernels: most of them
// (Transpose, Slice, Tile, Expand, Pad, Gather, ...) only move elements, so
// they work on storage of the element's size, and on std::string for strings.
//
//   // Transpose a [2,3] tensor: iterate the output shape, read with permuted strides.
//   StridedCopy(x.type(), x.raw(), /*src_strides=*/{1, 3}, y->mutable_raw(),
//               /*dst_strides=*/{2, 1}, /*dims=*/{3, 2});
//
// Strides and offsets are in elements. All functions are thread-safe for
// disjoint destinations and parallelise large copies with ParallelFor.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "onyx/tensor.h"

namespace onyx {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls fn(tag) where decltype(tag) is a storage type with the element size of
// `type` (uint8_t, uint16_t, uint32_t, uint64_t, Bytes16) or std::string.
// UNIMPLEMENTED for kUndefined.
template <typename Fn>
absl::Status DispatchStorage(DataType type, Fn&& fn) {
  if (type == DataType::kString) return fn(std::string{});
  switch (ElementSize(type)) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    case 8: return fn(uint64_t{});
    case 16: return fn(Bytes16{});
    default:
      return absl::UnimplementedError(absl::StrCat("element type ", DataTypeName(type), " is not supported"));
  }
}

// Row-major strides (in elements) of `dims`.
Dims StridesOf(absl::Span<const int64_t> dims);

// Copies n elements of `type` from src + src_off to dst + dst_off (element offsets).
void CopyElements(DataType type, const void* src, int64_t src_off, void* dst, int64_t dst_off, int64_t n);

// For every index i of `dims`: dst[i . dst_strides] = src[i . src_strides].
// Strides may be 0 (broadcast reads) or negative (reversed reads).
void StridedCopy(DataType type, const void* src, absl::Span<const int64_t> src_strides, void* dst,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims);

// Gathers along every axis at once: out has dims maps[a].size() per axis and
// out[o0, o1, ...] = src[maps[0][o0], maps[1][o1], ...] where src has
// `src_dims`. Every map entry must be a valid coordinate (checked by callers).
// Used by Pad (reflect/edge) and nearest-neighbour Resize.
void AxisMapCopy(DataType type, const void* src, absl::Span<const int64_t> src_dims, void* dst,
                 const std::vector<std::vector<int64_t>>& maps);

// Fills n elements of `type` at dst with the single element at `value`.
void FillElements(DataType type, const void* value, void* dst, int64_t n);

// Resolves a possibly negative axis against `rank`; false when out of range.
inline bool NormalizeAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

// Reads a 1-D (or scalar) int32/int64 tensor as int64 values; INVALID_ARGUMENT
// naming `what` for other types.
absl::Status ReadInt64s(const Tensor& t, absl::string_view what, std::vector<int64_t>* out);

}  // namespace onyx
