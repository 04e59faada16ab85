// Signal processing (opset 17): DFT along one axis (real or complex input,
// optional dft_length, inverse, onesided), STFT over frames of a signal with
// an optional window, and MelWeightMatrix. Transforms evaluate the DFT sum in
// double with a precomputed twiddle table, O(n^2) per transformed sequence.
#include <cmath>
#include <complex>
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

using Complex = std::complex<double>;

// out[k] = scale * sum_j in[j] * exp(sign * 2 pi i j k / n), k < out_len; `in`
// holds `in_len` <= n values (the rest are zero).
void DftSum(const Complex* in, int64_t in_len, int64_t n, bool inverse, int64_t out_len,
         const std::vector<Complex>& twiddle, Complex* out) {
  const double scale = inverse ? 1.0 / n : 1.0;
  for (int64_t k = 0; k < out_len; ++k) {
    Complex sum = 0;
    int64_t idx = 0;  // (j * k) mod n
    for (int64_t j = 0; j < in_len; ++j) {
      sum += in[j] * twiddle[idx];
      idx += k;
      if (idx >= n) idx %= n;
    }
    out[k] = sum * scale;
  }
}

std::vector<Complex> Twiddles(int64_t n, bool inverse) {
  std::vector<Complex> t(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t i = 0; i < n; ++i) t[i] = std::polar(1.0, sign * 2.0 * M_PI * i / n);
  return t;
}

absl::Status StoreDouble(OpKernelContext& ctx, const Tensor& value, DataType type) {
  ASSIGN_OR_RETURN(Tensor converted, ConvertNumeric(value, type));
  ASSIGN_OR_RETURN(Tensor* out, ctx.Output(0, value.dims(), type));
  std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
  return absl::OkStatus();
}

class Dft final : public OpKernel {
 public:
  explicit Dft(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", 1)),
        inverse_(info.AttrOr<int64_t>("inverse", 0) != 0),
        onesided_(info.AttrOr<int64_t>("onesided", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "input"));
    const int64_t rank = x_in->rank();
    if (rank < 2 || (x_in->dims().back() != 1 && x_in->dims().back() != 2)) {
      return ctx.Error("input must have rank >= 2 and a last dimension of 1 (real) or 2 (complex), received " +
                       DimsToString(x_in->dims()));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank - 1) {
      return ctx.Error(absl::StrCat("axis ", axis_, " must index a dimension other than the last of ",
                                    DimsToString(x_in->dims())));
    }
    const int64_t len = x_in->dims()[axis];
    int64_t n = len;
    if (const Tensor* t = ctx.Input(1); t != nullptr && t->num_elements() > 0) {
      n = ScalarAsInt64(*t);
      if (n <= 0) return ctx.Error(absl::StrCat("dft_length must be positive, received ", n));
    }
    const int64_t out_len = onesided_ ? n / 2 + 1 : n;
    Dims out_dims = x_in->dims();
    out_dims[axis] = out_len;
    out_dims.back() = 2;
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    Tensor y = Tensor::Allocate(DataType::kDouble, out_dims);
    const int64_t comps = x_in->dims().back();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x_in->dims()[d];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x_in->dims()[d];
    const std::vector<Complex> twiddle = Twiddles(n, inverse_);
    const int64_t used = std::min(len, n);
    const double* px = x.data<double>();
    double* py = y.mutable_data<double>();
    ParallelFor(outer * inner, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> seq(used), res(out_len);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / inner, i = r % inner;
        for (int64_t j = 0; j < used; ++j) {
          const double* e = px + ((o * len + j) * inner + i) * comps;
          seq[j] = Complex(e[0], comps == 2 ? e[1] : 0.0);
        }
        DftSum(seq.data(), used, n, inverse_, out_len, twiddle, res.data());
        for (int64_t k = 0; k < out_len; ++k) {
          double* e = py + ((o * out_len + k) * inner + i) * 2;
          e[0] = res[k].real();
          e[1] = res[k].imag();
        }
      }
    });
    return StoreDouble(ctx, y, x_in->type());
  }

 private:
  int64_t axis_;
  bool inverse_;
  bool onesided_;
};

class Stft final : public OpKernel {
 public:
  explicit Stft(const OpKernelInfo& info) : onesided_(info.AttrOr<int64_t>("onesided", 1) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* s_in, RequireInput(ctx, 0, "signal"));
    ASSIGN_OR_RETURN(const Tensor* step_in, RequireInput(ctx, 1, "frame_step"));
    const Tensor* window_in = ctx.Input(2);
    const Tensor* length_in = ctx.Input(3);
    if (s_in->rank() != 3 || (s_in->dims()[2] != 1 && s_in->dims()[2] != 2)) {
      return ctx.Error("signal must be [batch, length, 1 or 2], received " + DimsToString(s_in->dims()));
    }
    const int64_t step = ScalarAsInt64(*step_in);
    int64_t frame = -1;
    if (length_in != nullptr && length_in->num_elements() > 0) frame = ScalarAsInt64(*length_in);
    if (window_in != nullptr) {
      if (window_in->rank() != 1 || (frame >= 0 && window_in->dims()[0] != frame)) {
        return ctx.Error(absl::StrCat("window must be 1-D of frame_length ", frame, ", received ",
                                      DimsToString(window_in->dims())));
      }
      frame = window_in->dims()[0];
    }
    const int64_t batch = s_in->dims()[0], len = s_in->dims()[1], comps = s_in->dims()[2];
    if (frame <= 0 || frame > len || step <= 0) {
      return ctx.Error(absl::StrCat("need 0 < frame_length <= signal length and frame_step > 0; frame_length ", frame,
                                    ", signal length ", len, ", frame_step ", step));
    }
    const int64_t frames = (len - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    ASSIGN_OR_RETURN(Tensor s, ConvertNumeric(*s_in, DataType::kDouble));
    std::vector<double> window(frame, 1.0);
    for (int64_t i = 0; window_in != nullptr && i < frame; ++i) window[i] = ScalarAsDouble(*window_in, i);
    Tensor y = Tensor::Allocate(DataType::kDouble, {batch, frames, bins, 2});
    const std::vector<Complex> twiddle = Twiddles(frame, false);
    const double* ps = s.data<double>();
    double* py = y.mutable_data<double>();
    ParallelFor(batch * frames, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> seq(frame), res(bins);
      for (int64_t bf = begin; bf < end; ++bf) {
        const int64_t b = bf / frames, f = bf % frames;
        for (int64_t j = 0; j < frame; ++j) {
          const double* e = ps + (b * len + f * step + j) * comps;
          seq[j] = Complex(e[0], comps == 2 ? e[1] : 0.0) * window[j];
        }
        DftSum(seq.data(), frame, frame, false, bins, twiddle, res.data());
        for (int64_t k = 0; k < bins; ++k) {
          py[(bf * bins + k) * 2] = res[k].real();
          py[(bf * bins + k) * 2 + 1] = res[k].imag();
        }
      }
    });
    return StoreDouble(ctx, y, s_in->type());
  }

 private:
  bool onesided_;
};

class MelWeightMatrix final : public OpKernel {
 public:
  explicit MelWeightMatrix(const OpKernelInfo& info)
      : output_type_(static_cast<DataType>(info.AttrOr<int64_t>("output_datatype", 1))) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    static const char* kNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                   "upper_edge_hertz"};
    const Tensor* in[5];
    for (int i = 0; i < 5; ++i) {
      ASSIGN_OR_RETURN(in[i], RequireInput(ctx, i, kNames[i]));
      if (in[i]->num_elements() != 1) return ctx.Error(absl::StrCat(kNames[i], " must be a scalar"));
    }
    const int64_t mel_bins = ScalarAsInt64(*in[0]), dft_length = ScalarAsInt64(*in[1]);
    const double sample_rate = static_cast<double>(ScalarAsInt64(*in[2]));
    const double lower = ScalarAsDouble(*in[3]), upper = ScalarAsDouble(*in[4]);
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0 || lower < 0 || upper < lower) {
      return ctx.Error(absl::StrCat("invalid parameters: num_mel_bins ", mel_bins, ", dft_length ", dft_length,
                                    ", sample_rate ", sample_rate, ", edges [", lower, ", ", upper, "]"));
    }
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    // Mel-spaced band edges mapped to spectrogram bins, as in the ONNX reference.
    const double low_mel = 2595 * std::log10(1 + lower / 700), high_mel = 2595 * std::log10(1 + upper / 700);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edge(mel_bins + 2);
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700 * (std::pow(10.0, (i * mel_step + low_mel) / 2595) - 1);
      edge[i] = static_cast<int64_t>(std::floor((dft_length + 1) * hz / sample_rate));
      edge[i] = std::min(std::max<int64_t>(edge[i], 0), spectrogram_bins - 1);
    }
    Tensor w = Tensor::Allocate(DataType::kDouble, {spectrogram_bins, mel_bins});
    double* pw = w.mutable_data<double>();
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = edge[i], center = edge[i + 1], hi = edge[i + 2];
      if (center == lo) {
        pw[center * mel_bins + i] = 1;
      } else {
        for (int64_t j = lo; j <= center; ++j) pw[j * mel_bins + i] = static_cast<double>(j - lo) / (center - lo);
      }
      for (int64_t j = center; j < hi; ++j) pw[j * mel_bins + i] = static_cast<double>(hi - j) / (hi - center);
    }
    return StoreDouble(ctx, w, output_type_);
  }

 private:
  DataType output_type_;
};

}  // namespace

void RegisterSignalKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("DFT").Since(17).Build(), MakeFactory<Dft>());
  r.Register(KernelDefBuilder("STFT").Since(17).Build(), MakeFactory<Stft>());
  r.Register(KernelDefBuilder("MelWeightMatrix").Since(17).Build(), MakeFactory<MelWeightMatrix>());
}

}  // namespace onyx
