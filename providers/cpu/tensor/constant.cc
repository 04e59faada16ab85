// Ops that produce values from attributes or from shapes alone: Constant,
// ConstantOfShape, Shape, Size, Range, EyeLike.
#include <cmath>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

template <typename T>
Tensor VectorTensor(DataType type, const std::vector<T>& values, bool scalar) {
  Dims dims;
  if (!scalar) dims.push_back(static_cast<int64_t>(values.size()));
  Tensor t = Tensor::Allocate(type, dims);
  std::copy(values.begin(), values.end(), t.mutable_data<T>());
  return t;
}

class Constant final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const Node& n = info.node();
    Tensor value;
    if (n.FindAttribute("sparse_value") != nullptr) {
      return info.Error("attribute 'sparse_value' (sparse tensors) is not supported");
    } else if (n.FindAttribute("value") != nullptr) {
      ASSIGN_OR_RETURN(value, info.Attr<Tensor>("value"));
    } else if (n.FindAttribute("value_float") != nullptr) {
      ASSIGN_OR_RETURN(float f, info.Attr<float>("value_float"));
      value = VectorTensor<float>(DataType::kFloat, {f}, true);
    } else if (n.FindAttribute("value_floats") != nullptr) {
      ASSIGN_OR_RETURN(auto fs, info.Attr<std::vector<float>>("value_floats"));
      value = VectorTensor<float>(DataType::kFloat, fs, false);
    } else if (n.FindAttribute("value_int") != nullptr) {
      ASSIGN_OR_RETURN(int64_t i, info.Attr<int64_t>("value_int"));
      value = VectorTensor<int64_t>(DataType::kInt64, {i}, true);
    } else if (n.FindAttribute("value_ints") != nullptr) {
      ASSIGN_OR_RETURN(auto is, info.Attr<std::vector<int64_t>>("value_ints"));
      value = VectorTensor<int64_t>(DataType::kInt64, is, false);
    } else if (n.FindAttribute("value_string") != nullptr) {
      ASSIGN_OR_RETURN(std::string s, info.Attr<std::string>("value_string"));
      value = VectorTensor<std::string>(DataType::kString, {s}, true);
    } else if (n.FindAttribute("value_strings") != nullptr) {
      ASSIGN_OR_RETURN(auto ss, info.Attr<std::vector<std::string>>("value_strings"));
      value = VectorTensor<std::string>(DataType::kString, ss, false);
    } else {
      return info.Error("one of the attributes value, value_float(s), value_int(s), value_string(s) is required");
    }
    return std::unique_ptr<OpKernel>(new Constant(std::move(value)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ctx.SetOutput(0, Value(value_));
    return absl::OkStatus();
  }

 private:
  explicit Constant(Tensor value) : value_(std::move(value)) {}
  Tensor value_;  // shared with every run's output, never written
};

class ConstantOfShape final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    Tensor value;
    if (info.HasAttr("value")) {
      ASSIGN_OR_RETURN(value, info.Attr<Tensor>("value"));
      if (value.num_elements() != 1) {
        return info.Error(absl::StrCat("attribute 'value' must hold one element, received shape ",
                                       DimsToString(value.dims())));
      }
    } else {
      value = Tensor::Allocate(DataType::kFloat, {});
    }
    return std::unique_ptr<OpKernel>(new ConstantOfShape(std::move(value)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& shape = *ctx.Input(0);
    if (shape.type() != DataType::kInt64 || shape.rank() != 1) {
      return ctx.Error(absl::StrCat("input 'input' must be a 1-D int64 tensor, received ",
                                    DataTypeName(shape.type()), " ", DimsToString(shape.dims())));
    }
    Dims dims(shape.data<int64_t>(), shape.data<int64_t>() + shape.num_elements());
    for (int64_t d : dims) {
      if (d < 0) return ctx.Error(absl::StrCat("shape ", DimsToString(dims), " has a negative dimension"));
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, dims, value_.type()));
    FillElements(value_.type(), value_.raw(), y->mutable_raw(), y->num_elements());
    return absl::OkStatus();
  }

 private:
  explicit ConstantOfShape(Tensor value) : value_(std::move(value)) {}
  Tensor value_;
};

class Shape final : public OpKernel {
 public:
  explicit Shape(const OpKernelInfo& info)
      : start_(info.AttrOr<int64_t>("start", 0)),
        end_(info.HasAttr("end") ? info.AttrOr<int64_t>("end", 0) : INT64_MAX) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    auto clamp = [rank](int64_t v) {
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = clamp(start_), end = std::max(start, clamp(end_));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {end - start}, DataType::kInt64));
    for (int64_t i = start; i < end; ++i) y->mutable_data<int64_t>()[i - start] = x.dims()[i];
    return absl::OkStatus();
  }

 private:
  int64_t start_, end_;
};

class Size final : public OpKernel {
 public:
  explicit Size(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {}, DataType::kInt64));
    *y->mutable_data<int64_t>() = ctx.Input(0)->num_elements();
    return absl::OkStatus();
  }
};

class Range final : public OpKernel {
 public:
  explicit Range(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor* in[3] = {ctx.Input(0), ctx.Input(1), ctx.Input(2)};
    static const char* kNames[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      if (in[i]->num_elements() != 1 || in[i]->type() != in[0]->type()) {
        return ctx.Error(absl::StrCat("input '", kNames[i], "' must be a scalar of type ",
                                      DataTypeName(in[0]->type()), ", received ",
                                      DataTypeName(in[i]->type()), " ", DimsToString(in[i]->dims())));
      }
    }
    return DispatchTypes<float, double, int16_t, int32_t, int64_t>(in[0]->type(), [&](auto tag) {
      using T = decltype(tag);
      const T start = *in[0]->data<T>(), limit = *in[1]->data<T>(), delta = *in[2]->data<T>();
      if (delta == T(0)) return ctx.Error("input 'delta' is 0");
      const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                     static_cast<double>(delta));
      if (!(count < static_cast<double>(int64_t{1} << 48))) {  // also catches NaN
        return ctx.Error(absl::StrCat("range of ", count, " elements is too large"));
      }
      const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {n}, in[0]->type()));
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      return absl::OkStatus();
    });
  }
};

class EyeLike final : public OpKernel {
 public:
  explicit EyeLike(const OpKernelInfo& info)
      : dtype_(info.HasAttr("dtype") ? info.AttrOr<int64_t>("dtype", 0) : 0), k_(info.AttrOr<int64_t>("k", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    if (x.rank() != 2) return ctx.Error(absl::StrCat("input must be 2-D, received ", DimsToString(x.dims())));
    DataType type = dtype_ != 0 ? static_cast<DataType>(dtype_) : x.type();
    if (!IsValidDataType(static_cast<int32_t>(type)) || type == DataType::kString) {
      return ctx.Error(absl::StrCat("dtype ", dtype_, " is not supported"));
    }
    ASSIGN_OR_RETURN(Tensor one, ScalarOf(type, 1.0));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), type));
    const int64_t rows = x.dims()[0], cols = x.dims()[1];
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + k_;
      if (j >= 0 && j < cols) CopyElements(type, one.raw(), 0, y->mutable_raw(), i * cols + j, 1);
    }
    return absl::OkStatus();
  }

 private:
  int64_t dtype_, k_;
};

}  // namespace

void RegisterConstantKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Constant").Since(1).Build(), MakeFactory<Constant>());
  r.Register(KernelDefBuilder("ConstantOfShape").Since(9).Build(), MakeFactory<ConstantOfShape>());
  r.Register(KernelDefBuilder("Shape").Since(1).Build(), MakeFactory<Shape>());
  r.Register(KernelDefBuilder("Size").Since(1).Build(), MakeFactory<Size>());
  r.Register(KernelDefBuilder("Range").Since(11).Build(), MakeFactory<Range>());
  r.Register(KernelDefBuilder("EyeLike").Since(9).Build(), MakeFactory<EyeLike>());
}

}  // namespace onyx
