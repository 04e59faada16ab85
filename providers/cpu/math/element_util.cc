#include "providers/cpu/math/element_util.h"

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"

namespace onyx {

absl::StatusOr<const Tensor*> RequireInput(const OpKernelContext& ctx, int i, absl::string_view name) {
  const Tensor* t = ctx.Input(i);
  if (t == nullptr) {
    return ctx.Error(absl::StrCat("required input ", i, " ('", name, "') is missing or is not a tensor"));
  }
  return t;
}

absl::StatusOr<BinaryOperands> SameTypeOperands(const OpKernelContext& ctx, absl::string_view a_name,
                                                absl::string_view b_name) {
  BinaryOperands ops;
  ASSIGN_OR_RETURN(ops.a, RequireInput(ctx, 0, a_name));
  ASSIGN_OR_RETURN(ops.b, RequireInput(ctx, 1, b_name));
  if (ops.a->type() != ops.b->type()) {
    return ctx.Error(absl::StrCat("input types differ: ", DataTypeName(ops.a->type()), " vs ",
                                  DataTypeName(ops.b->type())));
  }
  auto shape = BroadcastShape(ops.a->dims(), ops.b->dims());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ops.dims = *std::move(shape);
  return ops;
}

Tensor UpcastToFloat(const Tensor& t) {
  if (!IsHalfLike(t.type())) return t;
  Tensor out = Tensor::Allocate(DataType::kFloat, t.dims());
  const uint16_t* src = t.data<uint16_t>();
  float* dst = out.mutable_data<float>();
  const bool half = t.type() == DataType::kFloat16;
  ParallelFor(t.num_elements(), 65536, [&](int64_t begin, int64_t end) {
    if (half) {
      for (int64_t i = begin; i < end; ++i) dst[i] = HalfToFloat(src[i]);
    } else {
      for (int64_t i = begin; i < end; ++i) dst[i] = BFloat16ToFloat(src[i]);
    }
  });
  return out;
}

void DowncastFromFloat(const Tensor& src, Tensor& dst) {
  const float* s = src.data<float>();
  const int64_t n = std::min(src.num_elements(), dst.num_elements());
  if (dst.type() == DataType::kFloat) {
    if (s != dst.data<float>()) std::copy(s, s + n, dst.mutable_data<float>());
    return;
  }
  uint16_t* d = dst.mutable_data<uint16_t>();
  const bool half = dst.type() == DataType::kFloat16;
  ParallelFor(n, 65536, [&](int64_t begin, int64_t end) {
    if (half) {
      for (int64_t i = begin; i < end; ++i) d[i] = FloatToHalf(s[i]);
    } else {
      for (int64_t i = begin; i < end; ++i) d[i] = FloatToBFloat16(s[i]);
    }
  });
}

namespace {

using AllNumeric = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                            uint64_t, bool>;

}  // namespace

absl::StatusOr<Tensor> ConvertNumeric(const Tensor& t, DataType to) {
  if (t.type() == to) return t;
  Tensor src = UpcastToFloat(t);
  const DataType compute_to = IsHalfLike(to) ? DataType::kFloat : to;
  Tensor out = Tensor::Allocate(compute_to, t.dims());
  if (src.type() == compute_to) {
    out = src.Clone();
  } else {
    absl::Status s = DispatchList(AllNumeric{}, src.type(), [&](auto from_tag) {
      using From = decltype(from_tag);
      return DispatchList(AllNumeric{}, compute_to, [&](auto to_tag) {
        using To = decltype(to_tag);
        const From* p = src.data<From>();
        To* q = out.mutable_data<To>();
        for (int64_t i = 0; i < src.num_elements(); ++i) q[i] = static_cast<To>(p[i]);
        return absl::OkStatus();
      });
    });
    if (!s.ok()) return s;
  }
  if (compute_to == to) return out;
  Tensor half = Tensor::Allocate(to, t.dims());
  DowncastFromFloat(out, half);
  return half;
}

double ScalarAsDouble(const Tensor& t, int64_t i) {
  double v = 0;
  Tensor f = IsHalfLike(t.type()) ? UpcastToFloat(t) : t;
  (void)DispatchList(AllNumeric{}, f.type(), [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(f.data<T>()[i]);
    return absl::OkStatus();
  });
  return v;
}

int64_t ScalarAsInt64(const Tensor& t, int64_t i) {
  int64_t v = 0;
  (void)DispatchTypes<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>(
      t.type(), [&](auto tag) {
        using T = decltype(tag);
        v = static_cast<int64_t>(t.data<T>()[i]);
        return absl::OkStatus();
      });
  return v;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  const int64_t lo = -std::max<int64_t>(rank, 1), hi = std::max<int64_t>(rank, 1) - 1;
  if (axis < lo || axis > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range [", lo, ", ", hi, "] for rank ", rank));
  }
  return axis < 0 ? axis + std::max<int64_t>(rank, 1) : axis;
}

}  // namespace onyx
