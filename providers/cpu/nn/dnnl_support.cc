#include "providers/cpu/nn/dnnl_support.h"

#include <unordered_map>

#include "common/parallel_for.h"

namespace onyx {

dnnl::engine& DnnlCpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& DnnlThreadStream() {
  thread_local dnnl::stream stream(DnnlCpuEngine());
  return stream;
}

absl::Status DnnlEltwise(dnnl::algorithm algorithm, float alpha, float beta, const float* x, float* y, int64_t n) {
  if (n == 0) return absl::OkStatus();
  return DnnlGuarded("element-wise function", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, md, alpha, beta);
    dnnl::eltwise_forward primitive(dnnl::eltwise_forward::primitive_desc(desc, DnnlCpuEngine()));
    dnnl::memory src(md, DnnlCpuEngine(), const_cast<float*>(x));
    dnnl::memory dst(md, DnnlCpuEngine(), y);
    dnnl::stream& stream = DnnlThreadStream();
    primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
    return absl::OkStatus();
  });
}

absl::Status DnnlLayerNormalization(const float* x, int64_t rows, int64_t len, float epsilon, const float* scale,
                                    const float* shift, float* y) {
  if (rows == 0 || len == 0) return absl::OkStatus();
  return DnnlGuarded("layer normalization", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::engine& engine = DnnlCpuEngine();
    const dnnl::memory::desc md({rows, len}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
    const dnnl::memory::desc vec({len}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x);
    const auto flags = shift != nullptr ? dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift
                                        : dnnl::normalization_flags::use_scale;
    dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, md, epsilon, flags);
    dnnl::layer_normalization_forward norm(dnnl::layer_normalization_forward::primitive_desc(desc, engine));
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, dnnl::memory(md, engine, const_cast<float*>(x))},
        {DNNL_ARG_DST, dnnl::memory(md, engine, y)},
        {DNNL_ARG_SCALE, dnnl::memory(vec, engine, const_cast<float*>(scale))}};
    if (shift != nullptr) args.emplace(DNNL_ARG_SHIFT, dnnl::memory(vec, engine, const_cast<float*>(shift)));
    dnnl::stream& stream = DnnlThreadStream();
    norm.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace onyx
