#include "providers/cpu/nn/dnnl_support.h"

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

}  // namespace onyx
