#include "providers/cpu/llm/batched_matmul.h"

#include <unordered_map>

#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {

absl::Status BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, MatrixStrides a_strides,
                           const float* b, MatrixStrides b_strides, float* c) {
  if (batch == 0 || m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < batch * m * n; ++i) c[i] = 0.f;
    return absl::OkStatus();
  }
  return DnnlGuarded("batched matmul", [&]() -> absl::Status {
    ApplyThreadSettings();
    using dnnl::memory;
    const auto f32 = memory::data_type::f32;
    const memory::desc a_md({batch, m, k}, f32, {a_strides.batch, a_strides.row, a_strides.col});
    const memory::desc b_md({batch, k, n}, f32, {b_strides.batch, b_strides.row, b_strides.col});
    const memory::desc c_md({batch, m, n}, f32, memory::format_tag::abc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::engine& engine = DnnlCpuEngine();
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine);
    dnnl::matmul matmul(pd);
    const memory::desc pad_md = pd.scratchpad_desc();
    void* pad = KernelScratchBytes(kScratchPrimitive, pad_md.get_size());
    if (pad == nullptr && pad_md.get_size() > 0) {
      return absl::ResourceExhaustedError("no memory for the batched matmul's scratchpad");
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(a_md, engine, const_cast<float*>(a))},
                                            {DNNL_ARG_WEIGHTS, memory(b_md, engine, const_cast<float*>(b))},
                                            {DNNL_ARG_DST, memory(c_md, engine, c)},
                                            {DNNL_ARG_SCRATCHPAD, memory(pad_md, engine, pad)}};
    dnnl::stream& stream = DnnlThreadStream();
    matmul.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace onyx
