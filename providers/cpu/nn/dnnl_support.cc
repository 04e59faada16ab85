#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {

dnnl::engine& DnnlCpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& DnnlThreadStream() {
  thread_local dnnl::stream stream(DnnlCpuEngine());
  return stream;
}

}  // namespace onyx
