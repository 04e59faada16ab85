// Conv (1-D to 3-D, groups including depthwise, pads, strides, dilations,
// auto_pad) and the optimizer's com.onyx FusedConv(X, W, B?, Z?) =
// act(Conv(X, W, B) + Z), float and float16, NCHW, through cuDNN.
//
// Why cuDNN's legacy API (cudnnConvolutionForward,
// cudnnConvolutionBiasActivationForward), deprecated in cuDNN 9 but present:
// the graph (backend) API needs a graph, engine heuristics and execution
// plans built through many more calls, and its usual C++ front end,
// cudnn-frontend, is not installed here. The legacy calls are a few
// descriptors and one call per run, and cuDNN 9 still serves them.
//
// Per input shape, once (a thread-safe cache in the kernel): descriptors, an
// algorithm from cudnnGetConvolutionForwardAlgorithm_v7 (heuristics only: no
// trial runs, no synchronization) that fits the lane's workspace, and the
// choice of epilogue. cudnnConvolutionBiasActivationForward computes
// act(conv + alpha2 * Z + bias) with act RELU or IDENTITY only, IDENTITY with
// the IMPLICIT_PRECOMP_GEMM algorithm only; every other case is
// cudnnConvolutionForward followed by one element-wise pass doing bias,
// residual and activation together. Asymmetric padding (SAME_* with an even
// window, or explicit) is applied by copying X into a zero-padded buffer in
// the lane workspace, since cuDNN pads symmetrically.
//
// Math: float16 uses tensor cores with float accumulation; float32 uses TF32
// tensor cores only when the lane allows it (CUDNN_FMA_MATH otherwise).
#include <cudnn.h>

#include <atomic>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"
#include "providers/cuda/kernels/spatial.h"

namespace onyx::cuda_ops {
namespace {

constexpr size_t kWorkspaceAlign = 256;

absl::Status CudnnStatus(const Node& node, const char* what, cudnnStatus_t s) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(node.Label(), ": cuDNN ", what, " failed: ", cudnnGetErrorString(s)));
}

#define ONYX_CUDNN_RETURN_IF_ERROR(what, expr)                                                          \
  do {                                                                                                  \
    const cudnnStatus_t onyx_cudnn_status_ = (expr);                                                    \
    if (onyx_cudnn_status_ != CUDNN_STATUS_SUCCESS) return CudnnStatus(node, what, onyx_cudnn_status_); \
  } while (0)

// The activation of a FusedConv (`activation`, `activation_params`; see
// engine/optimizer/README.md) as an element-wise op and its parameters.
struct Activation {
  UnaryOp op = UnaryOp::kIdentity;
  float alpha = 0.f, beta = 0.f;
};

absl::StatusOr<Activation> ParseActivation(const OpKernelInfo& info) {
  const std::string name = info.AttrOr<std::string>("activation", "");
  const std::vector<float> params = info.AttrOr<std::vector<float>>("activation_params", {});
  struct Known {
    const char* name;
    UnaryOp op;
    size_t params;
  };
  const Known known[] = {{"", UnaryOp::kIdentity, 0},
                         {"Relu", UnaryOp::kRelu, 0},
                         {"LeakyRelu", UnaryOp::kLeakyRelu, 1},
                         {"Clip", UnaryOp::kClip, 2},
                         {"Sigmoid", UnaryOp::kSigmoid, 0},
                         {"HardSigmoid", UnaryOp::kHardSigmoid, 2},
                         {"HardSwish", UnaryOp::kHardSwish, 0},
                         {"Swish", UnaryOp::kSwish, 1},
                         {"Tanh", UnaryOp::kTanh, 0}};
  for (const Known& k : known) {
    if (name != k.name) continue;
    if (params.size() != k.params) {
      return info.Error(
          absl::StrCat("activation '", name, "' takes ", k.params, " activation_params, received ", params.size()));
    }
    Activation a;
    a.op = k.op;
    if (k.params > 0) a.alpha = params[0];
    if (k.params > 1) a.beta = params[1];
    return a;
  }
  return info.Error(absl::StrCat("activation must be one of Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, ",
                                 "Swish, Tanh; received '", name, "'"));
}

// cuDNN objects and choices for one input shape; immutable once built, then
// shared by concurrent runs.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t algo_workspace = 0;
  bool fused = false;  // cudnnConvolutionBiasActivationForward applies
  // Set when cuDNN refused the fused call for this shape (the one mutable
  // member: a hint, read and written without ordering).
  mutable std::atomic<bool> fused_unsupported{false};
  // Asymmetric pads: X is first copied into a zero-padded buffer.
  bool pad_input = false;
  PadArgs pad;
  size_t padded_bytes = 0;  // rounded up to kWorkspaceAlign
  Dims out_dims;

  ~ConvPlan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (act) cudnnDestroyActivationDescriptor(act);
  }
};

// Row-major strides as int, for cuDNN's Nd descriptors.
std::vector<int> IntStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (int k = static_cast<int>(dims.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

class Conv final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckConvNode(info));
    auto k = std::unique_ptr<Conv>(new Conv());
    k->attrs_ = SpatialAttributes::FromInfo(info);
    k->group_ = info.AttrOr<int64_t>("group", 1);
    const bool fused = info.node().domain == kOnyxDomain;
    if (fused) {
      ASSIGN_OR_RETURN(k->activation_, ParseActivation(info));
    }
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
    const Tensor* b = DeviceInput(ctx, 2);
    const Tensor* z = DeviceInput(ctx, 3);
    const DataType type = x->type();
    if ((type != DataType::kFloat && type != DataType::kFloat16) || w->type() != type ||
        (b != nullptr && b->type() != type) || (z != nullptr && z->type() != type)) {
      return ctx.Error(absl::StrCat("computes float or float16 with X, W, B and Z of one type on CUDA; X is ",
                                    DataTypeName(type), ", W ", DataTypeName(w->type())));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "X"));
    const CudaLane& lane = CurrentCudaLane();
    ASSIGN_OR_RETURN(std::shared_ptr<const ConvPlan> plan, PlanFor(ctx, *x, *w, lane));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, plan->out_dims, type));
    if (y->num_elements() == 0) return absl::OkStatus();
    RETURN_IF_ERROR(CheckIndexable(ctx, y->num_elements(), "the output"));
    const int64_t channels = plan->out_dims[1];
    if (b != nullptr && b->num_elements() != channels) {
      return ctx.Error(absl::StrCat("B ", DimsToString(b->dims()), " must have ", channels, " elements"));
    }
    if (z != nullptr && z->dims() != y->dims()) {
      return ctx.Error(
          absl::StrCat("residual Z ", DimsToString(z->dims()), " does not match the output ", DimsToString(y->dims())));
    }
    const Node& node = ctx.node();
    ONYX_CUDNN_RETURN_IF_ERROR("cudnnSetStream", cudnnSetStream(lane.cudnn, lane.stream));
    const void* xp = x->raw();
    char* workspace = static_cast<char*>(lane.workspace);
    if (plan->pad_input) {
      RETURN_IF_ERROR(CheckLaunch(ctx, LaunchPad(ElementSize(type), plan->pad, x->raw(), workspace, lane.stream)));
      xp = workspace;
      workspace += plan->padded_bytes;
    }
    void* conv_workspace = plan->algo_workspace > 0 ? workspace : nullptr;
    const float one = 1.f, zero = 0.f;
    // cuDNN's fused call takes a bias; without one a Relu or Z still runs as
    // the two-step path.
    const bool fuse = plan->fused && !plan->fused_unsupported.load(std::memory_order_relaxed) && b != nullptr;
    if (fuse) {
      const float alpha2 = z != nullptr ? 1.f : 0.f;  // with 0, Z (then Y) is not read
      const cudnnStatus_t s = cudnnConvolutionBiasActivationForward(
          lane.cudnn, &one, plan->x, xp, plan->w, w->raw(), plan->conv, plan->algo, conv_workspace,
          plan->algo_workspace, &alpha2, plan->y, z != nullptr ? z->raw() : y->raw(), plan->bias, b->raw(), plan->act,
          plan->y, y->mutable_raw());
      if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
      // A refused configuration launches nothing: use the two-step path from
      // now on (it computes the same).
      const int category = CUDNN_STATUS_CATEGORY(s);
      if (category != CUDNN_STATUS_NOT_SUPPORTED && category != CUDNN_STATUS_BAD_PARAM) {
        return CudnnStatus(node, "cudnnConvolutionBiasActivationForward", s);
      }
      plan->fused_unsupported.store(true, std::memory_order_relaxed);
    }
    ONYX_CUDNN_RETURN_IF_ERROR(
        "cudnnConvolutionForward",
        cudnnConvolutionForward(lane.cudnn, &one, plan->x, xp, plan->w, w->raw(), plan->conv, plan->algo,
                                conv_workspace, plan->algo_workspace, &zero, plan->y, y->mutable_raw()));
    if (b == nullptr && z == nullptr && activation_.op == UnaryOp::kIdentity) return absl::OkStatus();
    const int64_t inner = y->num_elements() / (plan->out_dims[0] * channels);
    return CheckLaunch(
        ctx, LaunchBiasResidualActivation(type, y->mutable_raw(), b ? b->raw() : nullptr, z ? z->raw() : nullptr,
                                          y->num_elements(), channels, inner, activation_.op, activation_.alpha,
                                          activation_.beta, lane.stream));
  }

 private:
  Conv() = default;

  // The plan for this X and W shape (and workspace size), built on first use.
  absl::StatusOr<std::shared_ptr<const ConvPlan>> PlanFor(const OpKernelContext& ctx, const Tensor& x, const Tensor& w,
                                                          const CudaLane& lane) const {
    std::vector<int64_t> key(x.dims().begin(), x.dims().end());
    key.push_back(-1);
    key.insert(key.end(), w.dims().begin(), w.dims().end());
    key.push_back(static_cast<int64_t>(lane.workspace_bytes));
    key.push_back(lane.allow_tf32);
    {
      absl::MutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const ConvPlan> plan, BuildPlan(ctx, x, w, lane));
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = plans_.emplace(std::move(key), std::move(plan));
    return it->second;
  }

  absl::StatusOr<std::shared_ptr<const ConvPlan>> BuildPlan(const OpKernelContext& ctx, const Tensor& x,
                                                            const Tensor& w, const CudaLane& lane) const;

  SpatialAttributes attrs_;
  int64_t group_ = 1;
  Activation activation_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::vector<int64_t>, std::shared_ptr<const ConvPlan>> plans_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::shared_ptr<const ConvPlan>> Conv::BuildPlan(const OpKernelContext& ctx, const Tensor& x,
                                                                const Tensor& w, const CudaLane& lane) const {
  const Node& node = ctx.node();
  const int64_t rank = x.rank();
  if (rank < 3 || rank > 5 || w.rank() != rank) {
    return ctx.Error(absl::StrCat("X ", DimsToString(x.dims()), " and W ", DimsToString(w.dims()),
                                  " must have one rank of 3 to 5 (1-D to 3-D convolution)"));
  }
  const int64_t batch = x.dims()[0], in_channels = x.dims()[1], out_channels = w.dims()[0];
  if (group_ <= 0 || in_channels % group_ != 0 || out_channels % group_ != 0 || w.dims()[1] * group_ != in_channels) {
    return ctx.Error(
        absl::StrCat("channels do not match: X has ", in_channels, ", W ", DimsToString(w.dims()), ", group ", group_));
  }
  std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel) {
    return ctx.Error("attribute 'kernel_shape' does not match the weights' spatial dims " + DimsToString(kernel));
  }
  auto geometry = ResolveConvGeometry(attrs_, spatial, kernel);
  if (!geometry.ok()) return ctx.Error(geometry.status().message());
  const SpatialGeometry& g = *geometry;

  auto plan = std::make_shared<ConvPlan>();
  plan->out_dims = {batch, out_channels};
  plan->out_dims.insert(plan->out_dims.end(), g.out.begin(), g.out.end());
  if (NumElements(plan->out_dims) == 0) return std::shared_ptr<const ConvPlan>(std::move(plan));

  // Pads: symmetric ones go to cuDNN, asymmetric ones into a padded copy of X.
  std::vector<int64_t> in_dims(x.dims().begin(), x.dims().end());
  std::vector<int64_t> pads(g.pad_begin);
  for (size_t i = 0; i < spatial.size(); ++i) plan->pad_input |= g.pad_begin[i] != g.pad_end[i];
  const size_t elem = ElementSize(x.type());
  if (plan->pad_input) {
    plan->pad.rank = static_cast<int32_t>(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t before = d < 2 ? 0 : g.pad_begin[d - 2], after = d < 2 ? 0 : g.pad_end[d - 2];
      plan->pad.in_dims[d] = x.dims()[d];
      plan->pad.out_dims[d] = x.dims()[d] + before + after;
      plan->pad.pad_begin[d] = before;
      in_dims[d] = plan->pad.out_dims[d];
    }
    plan->pad.n = NumElements(absl::MakeConstSpan(plan->pad.out_dims, rank));
    if (!FitsIndex(plan->pad.n)) return ctx.Error("the padded input is too large for the CUDA kernels");
    plan->padded_bytes = (plan->pad.n * elem + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
    std::fill(pads.begin(), pads.end(), 0);
  }
  const size_t workspace = lane.workspace == nullptr ? 0 : lane.workspace_bytes;
  if (plan->padded_bytes > workspace) {
    return ctx.Error(absl::StrCat("asymmetric padding needs ", plan->padded_bytes,
                                  " bytes of workspace for the padded input; the lane has ", workspace));
  }

  // cuDNN takes 4-D and 5-D descriptors: a 1-D convolution is a 2-D one of height 1.
  auto to_int = [](int64_t v) { return static_cast<int>(v); };
  std::vector<int> xd, wd, yd, pad, stride, dilation;
  for (int64_t v : in_dims) xd.push_back(to_int(v));
  for (int64_t v : w.dims()) wd.push_back(to_int(v));
  for (int64_t v : plan->out_dims) yd.push_back(to_int(v));
  for (size_t i = 0; i < spatial.size(); ++i) {
    pad.push_back(to_int(pads[i]));
    stride.push_back(to_int(g.strides[i]));
    dilation.push_back(to_int(g.dilations[i]));
  }
  if (rank == 3) {
    xd.insert(xd.begin() + 2, 1);
    wd.insert(wd.begin() + 2, 1);
    yd.insert(yd.begin() + 2, 1);
    pad.insert(pad.begin(), 0);
    stride.insert(stride.begin(), 1);
    dilation.insert(dilation.begin(), 1);
  }
  const int nd = static_cast<int>(xd.size());
  const cudnnDataType_t dt = x.type() == DataType::kFloat ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateTensorDescriptor", cudnnCreateTensorDescriptor(&plan->x));
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateTensorDescriptor", cudnnCreateTensorDescriptor(&plan->y));
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateTensorDescriptor", cudnnCreateTensorDescriptor(&plan->bias));
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateFilterDescriptor", cudnnCreateFilterDescriptor(&plan->w));
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateConvolutionDescriptor", cudnnCreateConvolutionDescriptor(&plan->conv));
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnCreateActivationDescriptor", cudnnCreateActivationDescriptor(&plan->act));
  ONYX_CUDNN_RETURN_IF_ERROR("X descriptor",
                             cudnnSetTensorNdDescriptor(plan->x, dt, nd, xd.data(), IntStrides(xd).data()));
  ONYX_CUDNN_RETURN_IF_ERROR("Y descriptor",
                             cudnnSetTensorNdDescriptor(plan->y, dt, nd, yd.data(), IntStrides(yd).data()));
  std::vector<int> bd(nd, 1);
  bd[1] = to_int(out_channels);
  ONYX_CUDNN_RETURN_IF_ERROR("bias descriptor",
                             cudnnSetTensorNdDescriptor(plan->bias, dt, nd, bd.data(), IntStrides(bd).data()));
  ONYX_CUDNN_RETURN_IF_ERROR("W descriptor", cudnnSetFilterNdDescriptor(plan->w, dt, CUDNN_TENSOR_NCHW, nd, wd.data()));
  // Float accumulation for float16 too (cuDNN's pseudo-half configuration).
  ONYX_CUDNN_RETURN_IF_ERROR("convolution descriptor", cudnnSetConvolutionNdDescriptor(
                                                           plan->conv, nd - 2, pad.data(), stride.data(),
                                                           dilation.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  ONYX_CUDNN_RETURN_IF_ERROR("group count", cudnnSetConvolutionGroupCount(plan->conv, to_int(group_)));
  std::vector<int> cudnn_out(nd);
  ONYX_CUDNN_RETURN_IF_ERROR("output dims",
                             cudnnGetConvolutionNdForwardOutputDim(plan->conv, plan->x, plan->w, nd, cudnn_out.data()));
  if (cudnn_out != yd) {
    return absl::InternalError(
        absl::StrCat(node.Label(), ": cuDNN's output dims differ from ONNX's ", DimsToString(plan->out_dims)));
  }
  const cudnnMathType_t math = x.type() == DataType::kFloat16 ? CUDNN_TENSOR_OP_MATH
                               : lane.allow_tf32              ? CUDNN_DEFAULT_MATH
                                                              : CUDNN_FMA_MATH;
  ONYX_CUDNN_RETURN_IF_ERROR("math type", cudnnSetConvolutionMathType(plan->conv, math));

  // Heuristic ranking (no trial runs); the first algorithm that accepts the
  // math type and fits in what the padded input leaves of the workspace.
  constexpr int kCandidates = 8;
  cudnnConvolutionFwdAlgoPerf_t perf[kCandidates];
  int returned = 0;
  ONYX_CUDNN_RETURN_IF_ERROR("cudnnGetConvolutionForwardAlgorithm_v7",
                             cudnnGetConvolutionForwardAlgorithm_v7(lane.cudnn, plan->x, plan->w, plan->conv, plan->y,
                                                                    kCandidates, &returned, perf));
  const size_t available = workspace - plan->padded_bytes;
  bool found = false;
  for (int i = 0; i < returned && !found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    // Keep FMA math for float without TF32 whatever the ranking assumed.
    const cudnnMathType_t chosen = math == CUDNN_FMA_MATH ? math : perf[i].mathType;
    if (cudnnSetConvolutionMathType(plan->conv, chosen) != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(lane.cudnn, plan->x, plan->w, plan->conv, plan->y, perf[i].algo,
                                                &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > available) {
      continue;
    }
    plan->algo = perf[i].algo;
    plan->algo_workspace = bytes;
    found = true;
  }
  if (!found) {
    return absl::InternalError(absl::StrCat(node.Label(), ": cuDNN has no forward algorithm for X ",
                                            DimsToString(x.dims()), " and W ", DimsToString(w.dims()), " within ",
                                            available, " bytes of workspace"));
  }
  const bool relu = activation_.op == UnaryOp::kRelu;
  const bool identity = activation_.op == UnaryOp::kIdentity;
  plan->fused = relu || (identity && plan->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  ONYX_CUDNN_RETURN_IF_ERROR(
      "activation descriptor",
      cudnnSetActivationDescriptor(plan->act, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                   CUDNN_NOT_PROPAGATE_NAN, 0.0));
  return std::shared_ptr<const ConvPlan>(std::move(plan));
}

}  // namespace

absl::Status CheckConvNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (n.domain == kOnyxDomain && n.op_type == "FusedConv") {
    for (int i = 0; i < info.InputCount(); ++i) {
      const DataType t = info.InputType(i);
      if (t != DataType::kUndefined && t != DataType::kFloat && t != DataType::kFloat16) {
        return info.Error(
            absl::StrCat("FusedConv computes float and float16 on CUDA; input ", i, " is ", DataTypeName(t)));
      }
    }
    return ParseActivation(info).status();
  }
  return absl::OkStatus();
}

void RegisterConvKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Conv").Since(1).Types("T", kCudaFloatTypes).Build(), Conv::Create);
  r.Register(KernelDefBuilder("FusedConv").Domain(kOnyxDomain).Build(), Conv::Create);
}

}  // namespace onyx::cuda_ops
