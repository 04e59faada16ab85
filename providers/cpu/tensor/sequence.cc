// Sequence ops (SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence) and
// optional ops (Optional, OptionalHasElement, OptionalGetElement). Sequence
// elements share buffers with the tensors they came from (tensors are never
// written after they are produced).
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

// The sequence at input i, or INVALID_ARGUMENT.
absl::StatusOr<const Value*> SequenceInput(const OpKernelContext& ctx, int i) {
  const Value* v = ctx.InputValue(i);
  if (v == nullptr || !v->is_sequence()) return ctx.Error(absl::StrCat("input ", i, " must be a sequence"));
  return v;
}

// Reads an optional scalar position input and resolves it against `size`
// (valid range [-size, size + extra)); `fallback` when the input is absent.
absl::StatusOr<int64_t> Position(const OpKernelContext& ctx, int i, int64_t size, int64_t extra, int64_t fallback) {
  const Tensor* t = ctx.Input(i);
  if (t == nullptr) return fallback;
  std::vector<int64_t> v;
  absl::Status s = ReadInt64s(*t, "input 'position'", &v);
  if (!s.ok() || v.size() != 1) return ctx.Error("input 'position' must be one int32/int64 value");
  int64_t p = v[0];
  if (p < -size || p >= size + extra) {
    return ctx.Error(absl::StrCat("position ", p, " is out of range [", -size, ", ", size + extra - 1, "]"));
  }
  return p < 0 ? p + size : p;
}

class SequenceEmpty final : public OpKernel {
 public:
  explicit SequenceEmpty(const OpKernelInfo& info)
      : type_(static_cast<DataType>(info.AttrOr<int64_t>("dtype", static_cast<int64_t>(DataType::kFloat)))) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ctx.SetOutput(0, Value::Sequence(type_, {}));
    return absl::OkStatus();
  }

 private:
  DataType type_;
};

class SequenceConstruct final : public OpKernel {
 public:
  explicit SequenceConstruct(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, ctx.InputCount()));
    std::vector<Tensor> elements;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor& t = *ctx.Input(i);
      if (t.type() != ctx.Input(0)->type()) {
        return ctx.Error(absl::StrCat("input ", i, " is ", DataTypeName(t.type()), ", input 0 is ",
                                      DataTypeName(ctx.Input(0)->type())));
      }
      elements.push_back(t);
    }
    const DataType type = elements.empty() ? DataType::kUndefined : elements[0].type();
    ctx.SetOutput(0, Value::Sequence(type, std::move(elements)));
    return absl::OkStatus();
  }
};

class SequenceAt final : public OpKernel {
 public:
  explicit SequenceAt(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    const int64_t n = static_cast<int64_t>(seq->sequence().size());
    if (ctx.Input(1) == nullptr) return ctx.Error("input 'position' is missing");
    ASSIGN_OR_RETURN(int64_t p, Position(ctx, 1, n, 0, 0));
    ctx.SetOutput(0, Value(seq->sequence()[p]));
    return absl::OkStatus();
  }
};

class SequenceInsert final : public OpKernel {
 public:
  explicit SequenceInsert(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    const Tensor* t = ctx.Input(1);
    if (t == nullptr) return ctx.Error("input 'tensor' is missing");
    if (seq->sequence_type() != DataType::kUndefined && t->type() != seq->sequence_type()) {
      return ctx.Error(absl::StrCat("cannot insert a ", DataTypeName(t->type()), " tensor into a sequence of ",
                                    DataTypeName(seq->sequence_type())));
    }
    const int64_t n = static_cast<int64_t>(seq->sequence().size());
    ASSIGN_OR_RETURN(int64_t p, Position(ctx, 2, n, 1, n));
    std::vector<Tensor> elements = seq->sequence();
    elements.insert(elements.begin() + p, *t);
    ctx.SetOutput(0, Value::Sequence(t->type(), std::move(elements)));
    return absl::OkStatus();
  }
};

class SequenceErase final : public OpKernel {
 public:
  explicit SequenceErase(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    const int64_t n = static_cast<int64_t>(seq->sequence().size());
    if (n == 0) return ctx.Error("cannot erase from an empty sequence");
    ASSIGN_OR_RETURN(int64_t p, Position(ctx, 1, n, 0, n - 1));
    std::vector<Tensor> elements = seq->sequence();
    elements.erase(elements.begin() + p);
    ctx.SetOutput(0, Value::Sequence(seq->sequence_type(), std::move(elements)));
    return absl::OkStatus();
  }
};

class SequenceLength final : public OpKernel {
 public:
  explicit SequenceLength(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {}, DataType::kInt64));
    *y->mutable_data<int64_t>() = static_cast<int64_t>(seq->sequence().size());
    return absl::OkStatus();
  }
};

class SplitToSequence final : public OpKernel {
 public:
  explicit SplitToSequence(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", 0)), keepdims_(info.AttrOr<int64_t>("keepdims", 1) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, x.rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x.rank()));
    }
    const int64_t extent = x.dims()[axis];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* s = ctx.Input(1)) {
      std::vector<int64_t> v;
      absl::Status st = ReadInt64s(*s, "input 'split'", &v);
      if (!st.ok()) return ctx.Error(st.message());
      if (s->rank() == 0) {
        if (v[0] <= 0) return ctx.Error(absl::StrCat("split = ", v[0], " must be positive"));
        for (int64_t done = 0; done < extent; done += v[0]) sizes.push_back(std::min(v[0], extent - done));
      } else {
        int64_t sum = 0;
        for (int64_t d : v) {
          if (d < 0) return ctx.Error(absl::StrCat("split has a negative size ", d));
          sum += d;
        }
        if (sum != extent) {
          return ctx.Error(absl::StrCat("split sizes sum to ", sum, " but axis ", axis, " has size ", extent));
        }
        sizes = v;
      }
    } else {
      sizes.assign(extent, 1);
      squeeze = !keepdims_;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= x.dims()[a];
    for (int64_t a = axis + 1; a < x.rank(); ++a) inner *= x.dims()[a];
    std::vector<Tensor> parts;
    int64_t offset = 0;
    for (int64_t size : sizes) {
      Dims dims = x.dims();
      dims[axis] = size;
      Tensor part = Tensor::Allocate(x.type(), dims);
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(x.type(), x.raw(), (o * extent + offset) * inner, part.mutable_raw(), o * size * inner,
                     size * inner);
      }
      if (squeeze) {
        dims.erase(dims.begin() + axis);
        part = part.Reshaped(dims);
      }
      parts.push_back(std::move(part));
      offset += size;
    }
    ctx.SetOutput(0, Value::Sequence(x.type(), std::move(parts)));
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequence final : public OpKernel {
 public:
  explicit ConcatFromSequence(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", 0)), new_axis_(info.AttrOr<int64_t>("new_axis", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Value* seq, SequenceInput(ctx, 0));
    const std::vector<Tensor>& parts = seq->sequence();
    if (parts.empty()) return ctx.Error("cannot concatenate an empty sequence");
    const Tensor& first = parts[0];
    const int64_t rank = first.rank();
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, new_axis_ ? rank + 1 : rank)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for element rank ", rank));
    }
    // View each part as [outer, extent, inner] (extent 1 for new_axis).
    int64_t outer = 1, inner = 1, total = 0;
    for (int64_t a = 0; a < axis; ++a) outer *= first.dims()[a];
    for (int64_t a = new_axis_ ? axis : axis + 1; a < rank; ++a) inner *= first.dims()[a];
    std::vector<int64_t> extents;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Tensor& t = parts[i];
      bool match = t.rank() == rank && t.type() == first.type();
      for (int64_t a = 0; match && a < rank; ++a) match = (!new_axis_ && a == axis) || t.dims()[a] == first.dims()[a];
      if (!match) {
        return ctx.Error(absl::StrCat("element ", i, " (", DataTypeName(t.type()), " ", DimsToString(t.dims()),
                                      ") does not match element 0 (", DimsToString(first.dims()), ")"));
      }
      extents.push_back(new_axis_ ? 1 : t.dims()[axis]);
      total += extents.back();
    }
    Dims out_dims = first.dims();
    if (new_axis_) out_dims.insert(out_dims.begin() + axis, total);
    else out_dims[axis] = total;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, first.type()));
    int64_t offset = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const int64_t run = extents[i] * inner;
      for (int64_t o = 0; o < outer; ++o) {
        CopyElements(first.type(), parts[i].raw(), o * run, y->mutable_raw(), (o * total) * inner + offset, run);
      }
      offset += run;
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

class Optional final : public OpKernel {
 public:
  explicit Optional(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    ctx.SetOutput(0, v != nullptr ? *v : Value());
    return absl::OkStatus();
  }
};

class OptionalHasElement final : public OpKernel {
 public:
  explicit OptionalHasElement(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {}, DataType::kBool));
    *y->mutable_data<bool>() = v != nullptr && !v->is_none();
    return absl::OkStatus();
  }
};

class OptionalGetElement final : public OpKernel {
 public:
  explicit OptionalGetElement(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    if (v == nullptr || v->is_none()) return ctx.Error("the optional input is empty");
    ctx.SetOutput(0, *v);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterSequenceKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("SequenceEmpty").Since(11).Build(), MakeFactory<SequenceEmpty>());
  r.Register(KernelDefBuilder("SequenceConstruct").Since(11).Build(), MakeFactory<SequenceConstruct>());
  r.Register(KernelDefBuilder("SequenceAt").Since(11).Build(), MakeFactory<SequenceAt>());
  r.Register(KernelDefBuilder("SequenceInsert").Since(11).Build(), MakeFactory<SequenceInsert>());
  r.Register(KernelDefBuilder("SequenceErase").Since(11).Build(), MakeFactory<SequenceErase>());
  r.Register(KernelDefBuilder("SequenceLength").Since(11).Build(), MakeFactory<SequenceLength>());
  r.Register(KernelDefBuilder("SplitToSequence").Since(11).Build(), MakeFactory<SplitToSequence>());
  r.Register(KernelDefBuilder("ConcatFromSequence").Since(11).Build(), MakeFactory<ConcatFromSequence>());
  r.Register(KernelDefBuilder("Optional").Since(15).Build(), MakeFactory<Optional>());
  r.Register(KernelDefBuilder("OptionalHasElement").Since(15).Build(), MakeFactory<OptionalHasElement>());
  r.Register(KernelDefBuilder("OptionalGetElement").Since(15).Build(), MakeFactory<OptionalGetElement>());
}

}  // namespace onyx
