// Signal processing (opset 17): DFT along one axis (real or complex input,
// optional dft_length, inverse, onesided), STFT over frames of a signal with
// an optional window, and MelWeightMatrix. DFT-20 takes the axis as an input
// (default -2, the last signal axis) and reads inverse + onesided as the
// inverse of a one-sided transform: complex [.., n/2 + 1, .., 2] bins to a
// real signal [.., n, .., 1] (numpy's irfft; n = dft_length or 2 * (bins - 1)).
// Transforms evaluate the DFT sum in double with a precomputed twiddle table,
// O(n^2) per transformed sequence.
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

// The real signal of length n whose one-sided spectrum is `in` (in_len bins,
// zero beyond): the bins are extended by conjugate symmetry, X[n - k] =
// conj(X[k]), and, as numpy's irfft does, the imaginary parts of the DC and
// Nyquist bins are dropped.
void InverseOneSided(const Complex* in, int64_t in_len, int64_t n, const std::vector<Complex>& twiddle, double* out) {
  const int64_t bins = n / 2 + 1;
  auto bin = [&](int64_t k) { return k < in_len ? in[k] : Complex(0); };
  for (int64_t t = 0; t < n; ++t) {
    double sum = bin(0).real();
    int64_t idx = 0;  // (k * t) mod n
    for (int64_t k = 1; k < bins; ++k) {
      idx += t;
      if (idx >= n) idx %= n;
      const double term = (bin(k) * twiddle[idx]).real();
      sum += (n % 2 == 0 && k == n / 2) ? bin(k).real() * twiddle[idx].real() : 2 * term;
    }
    out[t] = sum / n;
  }
}

class Dft final : public OpKernel {
 public:
  explicit Dft(const OpKernelInfo& info)
      : version_(info.node().since_version),
        axis_(info.AttrOr<int64_t>("axis", 1)),
        inverse_(info.AttrOr<int64_t>("inverse", 0) != 0),
        onesided_(info.AttrOr<int64_t>("onesided", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "input"));
    const int64_t rank = x_in->rank();
    if (rank < 2 || (x_in->dims().back() != 1 && x_in->dims().back() != 2)) {
      return ctx.Error("input must have rank >= 2 and a last dimension of 1 (real) or 2 (complex), received " +
                       DimsToString(x_in->dims()));
    }
    int64_t axis_arg = axis_;
    if (version_ >= 20) {
      axis_arg = -2;
      if (const Tensor* t = ctx.Input(2); t != nullptr) {
        if (t->num_elements() != 1) return ctx.Error("axis must be a scalar, received " + DimsToString(t->dims()));
        axis_arg = ScalarAsInt64(*t);
      }
    }
    const int64_t axis = axis_arg < 0 ? axis_arg + rank : axis_arg;
    if (axis < 0 || axis >= rank - 1) {
      return ctx.Error(absl::StrCat("axis ", axis_arg, " must index a dimension other than the last of ",
                                    DimsToString(x_in->dims())));
    }
    const int64_t comps = x_in->dims().back();
    // DFT-20's inverse one-sided transform: complex bins to a real signal.
    const bool to_real = version_ >= 20 && inverse_ && onesided_;
    if (version_ >= 20 && onesided_ && (comps == 2) != inverse_) {
      return ctx.Error(inverse_ ? "an inverse one-sided DFT needs complex input (last dimension 2)"
                                : "a one-sided DFT needs real input (last dimension 1)");
    }
    const int64_t len = x_in->dims()[axis];
    int64_t n = to_real ? 2 * (len - 1) : len;
    if (const Tensor* t = ctx.Input(1); t != nullptr && t->num_elements() > 0) {
      n = ScalarAsInt64(*t);
      if (n <= 0) return ctx.Error(absl::StrCat("dft_length must be positive, received ", n));
    }
    if (n <= 0) return ctx.Error(absl::StrCat("the transform length must be positive, received ", n));
    const int64_t out_len = to_real ? n : onesided_ ? n / 2 + 1 : n;
    Dims out_dims = x_in->dims();
    out_dims[axis] = out_len;
    out_dims.back() = to_real ? 1 : 2;
    ASSIGN_OR_RETURN(Tensor x, ConvertNumeric(*x_in, DataType::kDouble));
    Tensor y = Tensor::Allocate(DataType::kDouble, out_dims);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x_in->dims()[d];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x_in->dims()[d];
    const std::vector<Complex> twiddle = Twiddles(n, inverse_);
    const int64_t used = to_real ? std::min(len, n / 2 + 1) : std::min(len, n);
    const double* px = x.data<double>();
    double* py = y.mutable_data<double>();
    const int64_t out_comps = out_dims.back();
    ParallelFor(outer * inner, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> seq(used), res(out_len);
      std::vector<double> real(to_real ? out_len : 0);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / inner, i = r % inner;
        for (int64_t j = 0; j < used; ++j) {
          const double* e = px + ((o * len + j) * inner + i) * comps;
          seq[j] = Complex(e[0], comps == 2 ? e[1] : 0.0);
        }
        if (to_real) {
          InverseOneSided(seq.data(), used, n, twiddle, real.data());
          for (int64_t k = 0; k < out_len; ++k) res[k] = real[k];
        } else {
          DftSum(seq.data(), used, n, inverse_, out_len, twiddle, res.data());
        }
        for (int64_t k = 0; k < out_len; ++k) {
          double* e = py + ((o * out_len + k) * inner + i) * out_comps;
          e[0] = res[k].real();
          if (out_comps == 2) e[1] = res[k].imag();
        }
      }
    });
    return StoreDouble(ctx, y, x_in->type());
  }

 private:
  int version_;
  int64_t axis_;  // DFT-17's attribute; DFT-20 reads input 2
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
        return ctx.Error(
            absl::StrCat("window must be 1-D of frame_length ", frame, ", received ", DimsToString(window_in->dims())));
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
    static const char* kNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
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
  // One kernel for DFT-17 and -20; it reads the node's version (axis attribute
  // or input, the inverse one-sided transform).
  r.Register(KernelDefBuilder("DFT").Since(17).Build(), MakeFactory<Dft>());
  r.Register(KernelDefBuilder("STFT").Since(17).Build(), MakeFactory<Stft>());
  r.Register(KernelDefBuilder("MelWeightMatrix").Since(17).Build(), MakeFactory<MelWeightMatrix>());
}

}  // namespace onyx
