#include "providers/cpu/tensor/copy_util.h"

#include <algorithm>

#include "common/parallel_for.h"

namespace onyx {
namespace {

constexpr int64_t kCopyGrain = 32768;  // elements per ParallelFor block

template <typename E>
inline void CopyRun(const E* src, E* dst, int64_t n) {
  if constexpr (std::is_same_v<E, std::string>) {
    std::copy(src, src + n, dst);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(E));
  }
}

// Walks the rows [begin, end) of an index space whose last axis is the row,
// calling fn(src_offset, dst_offset) per row.
template <typename Fn>
void ForEachRow(absl::Span<const int64_t> outer, absl::Span<const int64_t> src_strides,
                absl::Span<const int64_t> dst_strides, int64_t begin, int64_t end, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(outer.size());
  Dims index(rank, 0);
  int64_t rem = begin, s = 0, d = 0;
  for (int64_t a = rank - 1; a >= 0; --a) {
    index[a] = rem % outer[a];
    rem /= outer[a];
    s += index[a] * src_strides[a];
    d += index[a] * dst_strides[a];
  }
  for (int64_t r = begin; r < end; ++r) {
    fn(s, d);
    for (int64_t a = rank - 1; a >= 0; --a) {
      ++index[a];
      s += src_strides[a];
      d += dst_strides[a];
      if (index[a] < outer[a]) break;
      s -= index[a] * src_strides[a];
      d -= index[a] * dst_strides[a];
      index[a] = 0;
    }
  }
}

// dst[r * dr + c] = src[r + c * sc] for an R x C block, in cache-sized tiles.
template <typename E>
void TransposeBlock(const E* src, int64_t sc, E* dst, int64_t dr, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) dst[r * dr + c] = src[r + c * sc];
      }
    }
  }
}

template <typename E>
void StridedCopyImpl(const E* src, const Dims& ss, E* dst, const Dims& ds, const Dims& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t inner = dims[rank - 1], si = ss[rank - 1], di = ds[rank - 1];
  const int64_t rows = NumElements(dims) / inner;
  if (rank >= 2 && di == 1 && si != 1 && ss[rank - 2] == 1 && dims[rank - 2] >= 8 && inner >= 2) {
    // A transpose of the two innermost axes (NCHW <-> NHWC among them, with
    // as few as 3 channels): copy in tiles so that both the reads and the
    // writes stay within a few cache lines, the threads taking chunks of
    // rows of every block.
    constexpr int64_t kChunk = 256;
    const int64_t block_rows = dims[rank - 2];
    const int64_t blocks = rows / block_rows;
    const int64_t chunks = (block_rows + kChunk - 1) / kChunk;
    absl::Span<const int64_t> outer(dims.data(), rank - 2);
    ParallelFor(blocks * chunks, std::max<int64_t>(1, kCopyGrain / (inner * kChunk)), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t block = item / chunks, r0 = (item % chunks) * kChunk;
        ForEachRow(outer, ss, ds, block, block + 1, [&](int64_t s, int64_t d) {
          TransposeBlock(src + s + r0 * ss[rank - 2], si, dst + d + r0 * ds[rank - 2], ds[rank - 2],
                         std::min(kChunk, block_rows - r0), inner);
        });
      }
    });
    return;
  }
  absl::Span<const int64_t> outer(dims.data(), rank - 1);
  ParallelFor(rows, std::max<int64_t>(1, kCopyGrain / inner), [&](int64_t begin, int64_t end) {
    ForEachRow(outer, ss, ds, begin, end, [&](int64_t s, int64_t d) {
      const E* sp = src + s;
      E* dp = dst + d;
      if (si == 1 && di == 1) {
        CopyRun(sp, dp, inner);
      } else if (di == 1) {
        for (int64_t k = 0; k < inner; ++k) dp[k] = sp[k * si];
      } else {
        for (int64_t k = 0; k < inner; ++k) dp[k * di] = sp[k * si];
      }
    });
  });
}

}  // namespace

Dims StridesOf(absl::Span<const int64_t> dims) {
  Dims strides(dims.size(), 1);
  for (int64_t a = static_cast<int64_t>(dims.size()) - 2; a >= 0; --a) strides[a] = strides[a + 1] * dims[a + 1];
  return strides;
}

void CopyElements(DataType type, const void* src, int64_t src_off, void* dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (type == DataType::kString) {
    const auto* s = static_cast<const std::string*>(src) + src_off;
    std::copy(s, s + n, static_cast<std::string*>(dst) + dst_off);
    return;
  }
  const size_t es = ElementSize(type);
  std::memcpy(static_cast<char*>(dst) + dst_off * es, static_cast<const char*>(src) + src_off * es, n * es);
}

void StridedCopy(DataType type, const void* src, absl::Span<const int64_t> src_strides, void* dst,
                 absl::Span<const int64_t> dst_strides, absl::Span<const int64_t> dims) {
  // Drop size-1 axes and merge axes that are contiguous in both source and
  // destination, so the innermost run is as long as possible.
  Dims d, ss, ds;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] == 0) return;
    if (dims[a] == 1) continue;
    if (!d.empty() && ss.back() == src_strides[a] * dims[a] && ds.back() == dst_strides[a] * dims[a]) {
      d.back() *= dims[a];
      ss.back() = src_strides[a];
      ds.back() = dst_strides[a];
      continue;
    }
    d.push_back(dims[a]);
    ss.push_back(src_strides[a]);
    ds.push_back(dst_strides[a]);
  }
  (void)DispatchStorage(type, [&](auto tag) {
    using E = decltype(tag);
    StridedCopyImpl(static_cast<const E*>(src), ss, static_cast<E*>(dst), ds, d);
    return absl::OkStatus();
  });
}

void AxisMapCopy(DataType type, const void* src, absl::Span<const int64_t> src_dims, void* dst,
                 const std::vector<std::vector<int64_t>>& maps) {
  const int64_t rank = static_cast<int64_t>(maps.size());
  Dims out_dims;
  for (const auto& m : maps) out_dims.push_back(static_cast<int64_t>(m.size()));
  const int64_t total = NumElements(out_dims);
  if (total == 0) return;
  if (rank == 0) {
    CopyElements(type, src, 0, dst, 0, 1);
    return;
  }
  const Dims src_strides = StridesOf(src_dims);
  const std::vector<int64_t>& last = maps[rank - 1];
  const int64_t inner = out_dims[rank - 1];
  // Runs of the innermost map that read consecutive source elements.
  std::vector<std::pair<int64_t, int64_t>> runs;  // (output start, length)
  for (int64_t k = 0; k < inner; ++k) {
    if (!runs.empty() && last[k] == last[k - 1] + 1) {
      ++runs.back().second;
    } else {
      runs.emplace_back(k, 1);
    }
  }
  const bool use_runs = static_cast<int64_t>(runs.size()) * 4 <= inner;
  (void)DispatchStorage(type, [&](auto tag) {
    using E = decltype(tag);
    const E* s = static_cast<const E*>(src);
    E* d = static_cast<E*>(dst);
    const int64_t rows = total / inner;
    ParallelFor(rows, std::max<int64_t>(1, kCopyGrain / inner), [&](int64_t begin, int64_t end) {
      Dims index(rank - 1, 0);
      int64_t rem = begin;
      for (int64_t a = rank - 2; a >= 0; --a) {
        index[a] = rem % out_dims[a];
        rem /= out_dims[a];
      }
      for (int64_t r = begin; r < end; ++r) {
        int64_t base = 0;
        for (int64_t a = 0; a < rank - 1; ++a) base += maps[a][index[a]] * src_strides[a];
        const E* sp = s + base;
        E* dp = d + r * inner;
        if (use_runs) {
          for (const auto& [start, len] : runs) CopyRun(sp + last[start], dp + start, len);
        } else {
          for (int64_t k = 0; k < inner; ++k) dp[k] = sp[last[k]];
        }
        for (int64_t a = rank - 2; a >= 0; --a) {
          if (++index[a] < out_dims[a]) break;
          index[a] = 0;
        }
      }
    });
    return absl::OkStatus();
  });
}

void FillElements(DataType type, const void* value, void* dst, int64_t n) {
  (void)DispatchStorage(type, [&](auto tag) {
    using E = decltype(tag);
    const E v = *static_cast<const E*>(value);
    E* d = static_cast<E*>(dst);
    ParallelFor(n, kCopyGrain, [&](int64_t begin, int64_t end) { std::fill(d + begin, d + end, v); });
    return absl::OkStatus();
  });
}

absl::Status ReadInt64s(const Tensor& t, absl::string_view what, std::vector<int64_t>* out) {
  if (t.rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be 1-D, received shape ", DimsToString(t.dims())));
  }
  out->clear();
  if (t.type() == DataType::kInt64) {
    out->assign(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
  } else if (t.type() == DataType::kInt32) {
    out->assign(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be int32 or int64, received ", DataTypeName(t.type())));
  }
  return absl::OkStatus();
}

}  // namespace onyx
