#include "providers/cpu/llm/attention_shape.h"

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {
namespace {

absl::Status Expect(const OpKernelContext& ctx, const char* name, const Tensor& t, const Dims& expected) {
  if (t.dims() == expected) return absl::OkStatus();
  return ctx.Error(absl::StrCat(name, " must be ", DimsToString(expected), ", received ", DimsToString(t.dims())));
}

bool IsFloating(DataType t) { return t == DataType::kFloat || t == DataType::kDouble || IsHalfLike(t); }

}  // namespace

absl::StatusOr<AttentionShape> ReadAttentionShape(const OpKernelContext& ctx, const AttentionAttrs& attrs) {
  ASSIGN_OR_RETURN(const Tensor* q, RequireInput(ctx, 0, "Q"));
  ASSIGN_OR_RETURN(const Tensor* k, RequireInput(ctx, 1, "K"));
  ASSIGN_OR_RETURN(const Tensor* v, RequireInput(ctx, 2, "V"));
  for (const Tensor* t : {q, k, v}) {
    if (!IsFloating(t->type())) {
      return ctx.Error(absl::StrCat("Q, K and V must be floating point, received ", DataTypeName(t->type())));
    }
  }
  if ((q->rank() != 3 && q->rank() != 4) || k->rank() != q->rank() || v->rank() != q->rank()) {
    return ctx.Error(absl::StrCat("Q, K and V must all be 3-D or all 4-D, received ", DimsToString(q->dims()), ", ",
                                  DimsToString(k->dims()), ", ", DimsToString(v->dims())));
  }
  AttentionShape s;
  s.batch = q->dims()[0];
  if (q->rank() == 4) {
    s.q_heads = q->dims()[1], s.q_seq = q->dims()[2], s.head = q->dims()[3];
    s.kv_heads = k->dims()[1], s.kv_seq = k->dims()[2], s.v_head = v->dims()[3];
    RETURN_IF_ERROR(Expect(ctx, "K", *k, {s.batch, s.kv_heads, s.kv_seq, s.head}));
    RETURN_IF_ERROR(Expect(ctx, "V", *v, {s.batch, s.kv_heads, s.kv_seq, s.v_head}));
  } else {
    s.three_d = true;
    s.q_heads = attrs.q_num_heads, s.kv_heads = attrs.kv_num_heads;
    if (s.q_heads <= 0 || s.kv_heads <= 0) {
      return ctx.Error("3-D inputs need the q_num_heads and kv_num_heads attributes");
    }
    if (q->dims()[2] % s.q_heads != 0 || k->dims()[2] % s.kv_heads != 0 || v->dims()[2] % s.kv_heads != 0) {
      return ctx.Error(absl::StrCat("hidden sizes of Q ", DimsToString(q->dims()), ", K ", DimsToString(k->dims()),
                                    " and V ", DimsToString(v->dims()), " must divide by q_num_heads ", s.q_heads,
                                    " and kv_num_heads ", s.kv_heads));
    }
    s.q_seq = q->dims()[1], s.head = q->dims()[2] / s.q_heads;
    s.kv_seq = k->dims()[1], s.v_head = v->dims()[2] / s.kv_heads;
    RETURN_IF_ERROR(Expect(ctx, "K", *k, {s.batch, s.kv_seq, s.kv_heads * s.head}));
    RETURN_IF_ERROR(Expect(ctx, "V", *v, {s.batch, s.kv_seq, s.kv_heads * s.v_head}));
  }
  if (s.kv_heads <= 0 || s.q_heads % s.kv_heads != 0) {
    return ctx.Error(absl::StrCat("q_heads ", s.q_heads, " must be a multiple of kv_heads ", s.kv_heads));
  }
  const Tensor* past_key = ctx.InputCount() > 4 ? ctx.Input(4) : nullptr;
  const Tensor* past_value = ctx.InputCount() > 5 ? ctx.Input(5) : nullptr;
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  if (past_key != nullptr) {
    if (past_key->rank() != 4) {
      return ctx.Error(absl::StrCat("past_key must be 4-D, received ", DimsToString(past_key->dims())));
    }
    s.past = past_key->dims()[2];
    RETURN_IF_ERROR(Expect(ctx, "past_key", *past_key, {s.batch, s.kv_heads, s.past, s.head}));
    RETURN_IF_ERROR(Expect(ctx, "past_value", *past_value, {s.batch, s.kv_heads, s.past, s.v_head}));
  }
  s.total = s.past + s.kv_seq;
  return s;
}

}  // namespace onyx
