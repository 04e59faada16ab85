#include "providers/cpu/contrib/attention_core.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/status_macros.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {

using dnnl::memory;

struct AttentionCore::Compiled {
  dnnl::matmul scores;  // Q x K' -> [B, N, S, T]
  dnnl::softmax_forward softmax;
  dnnl::matmul context;  // probs x V -> out view
  memory::desc q, k_transposed, scores_md, v, out, rows;
  size_t scratchpad_bytes = 0;
};

AttentionCore::AttentionCore() = default;
AttentionCore::~AttentionCore() = default;

namespace {

bool HasPrefill(const AttentionProblem& p) { return p.mask != nullptr || p.attention_bias != nullptr; }

// scores[b, n, s, t] = attention_bias[b|0, n|0, s, t] + mask[b, s, t]: what
// the first product's sum post-op adds to the scaled Q x K'.
void Prefill(const AttentionProblem& p, float* scores) {
  const int64_t rows = p.batch * p.heads * p.q_len, t_len = p.kv_len;
  ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(t_len, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t s = r % p.q_len, n = (r / p.q_len) % p.heads, b = r / (p.q_len * p.heads);
      float* dst = scores + r * t_len;
      const float* mask = p.mask ? p.mask + (b * p.q_len + s) * t_len : nullptr;
      if (p.attention_bias != nullptr) {
        const int64_t bb = p.bias_per_batch ? b : 0, bn = p.bias_per_head ? n : 0;
        const float* bias = p.attention_bias + ((bb * (p.bias_per_head ? p.heads : 1) + bn) * p.q_len + s) * t_len;
        if (mask != nullptr) {
          for (int64_t t = 0; t < t_len; ++t) dst[t] = bias[t] + mask[t];
        } else {
          std::memcpy(dst, bias, t_len * sizeof(float));
        }
      } else {
        std::memcpy(dst, mask, t_len * sizeof(float));
      }
    }
  });
}

memory::desc View(int64_t b, int64_t n, int64_t rows, int64_t cols, const std::array<int64_t, 3>& strides) {
  return memory::desc({b, n, rows, cols}, memory::data_type::f32, {strides[0], strides[1], strides[2], 1});
}

}  // namespace

absl::StatusOr<std::shared_ptr<const AttentionCore::Compiled>> AttentionCore::CompiledFor(
    const AttentionProblem& p) const {
  ApplyThreadSettings();
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &p.scale, sizeof(float));
  const std::vector<int64_t> key = {
      p.batch,        p.heads,        p.q_len,         p.kv_len,         p.qk_head,        p.v_head,
      p.q.strides[0], p.q.strides[1], p.q.strides[2],  p.k.strides[0],   p.k.strides[1],   p.k.strides[2],
      p.v.strides[0], p.v.strides[1], p.v.strides[2],  p.out_strides[0], p.out_strides[1], p.out_strides[2],
      HasPrefill(p),  scale_bits,     IntraOpThreads()};
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) return it->second;
  }
  auto c = std::make_shared<Compiled>();
  RETURN_IF_ERROR(DnnlGuarded("attention products", [&]() -> absl::Status {
    const auto f32 = memory::data_type::f32;
    const int64_t b = p.batch, n = p.heads, s = p.q_len, t = p.kv_len;
    c->q = View(b, n, s, p.qk_head, p.q.strides);
    // K' [B, N, H, T]: element (b, n, h, t) is K's (b, n, t, h).
    c->k_transposed = memory::desc({b, n, p.qk_head, t}, f32, {p.k.strides[0], p.k.strides[1], 1, p.k.strides[2]});
    c->scores_md = memory::desc({b, n, s, t}, f32, memory::format_tag::abcd);
    c->v = View(b, n, t, p.v_head, p.v.strides);
    c->out = View(b, n, s, p.v_head, p.out_strides);
    c->rows = memory::desc({b * n * s, t}, f32, memory::format_tag::ab);

    dnnl::primitive_attr scores_attr;
    scores_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    scores_attr.set_output_scales(0, {p.scale});
    if (HasPrefill(p)) {
      dnnl::post_ops ops;
      ops.append_sum(1.f);
      scores_attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc scores_pd(dnnl::matmul::desc(c->q, c->k_transposed, c->scores_md), scores_attr,
                                                 DnnlCpuEngine());
    dnnl::primitive_attr plain;
    plain.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::softmax_forward::primitive_desc softmax_pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, c->rows, 1), plain, DnnlCpuEngine());
    const dnnl::matmul::primitive_desc context_pd(dnnl::matmul::desc(c->scores_md, c->v, c->out), plain,
                                                  DnnlCpuEngine());
    c->scores = dnnl::matmul(scores_pd);
    c->softmax = dnnl::softmax_forward(softmax_pd);
    c->context = dnnl::matmul(context_pd);
    c->scratchpad_bytes = std::max({scores_pd.scratchpad_desc().get_size(), softmax_pd.scratchpad_desc().get_size(),
                                    context_pd.scratchpad_desc().get_size()});
    return absl::OkStatus();
  }));
  absl::MutexLock lock(&mu_);
  if (compiled_.size() < kMaxCompiled) compiled_.emplace(key, c);
  return std::shared_ptr<const Compiled>(std::move(c));
}

absl::Status AttentionCore::Run(const AttentionProblem& p) const {
  if (p.batch == 0 || p.heads == 0 || p.q_len == 0 || p.v_head == 0) return absl::OkStatus();
  if (p.kv_len == 0) {  // no key to attend: a zero context, as an empty weighted sum
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t n = 0; n < p.heads; ++n) {
        for (int64_t s = 0; s < p.q_len; ++s) {
          float* row = p.out + b * p.out_strides[0] + n * p.out_strides[1] + s * p.out_strides[2];
          std::fill(row, row + p.v_head, 0.f);
        }
      }
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(p));
  const int64_t score_count = p.batch * p.heads * p.q_len * p.kv_len;
  float* scores = KernelScratch<float>(kScratchIm2Col, score_count);
  void* pad = KernelScratchBytes(kScratchPrimitive, c->scratchpad_bytes);
  if (scores == nullptr || pad == nullptr) return absl::ResourceExhaustedError("no memory for the attention scores");
  if (HasPrefill(p)) Prefill(p, scores);
  return DnnlGuarded("attention run", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::engine& engine = DnnlCpuEngine();
    dnnl::stream& stream = DnnlThreadStream();
    memory scratchpad(
        memory::desc({static_cast<int64_t>(c->scratchpad_bytes)}, memory::data_type::u8, memory::format_tag::a), engine,
        pad);
    memory scores_mem(c->scores_md, engine, scores);
    c->scores.execute(stream, {{DNNL_ARG_SRC, memory(c->q, engine, const_cast<float*>(p.q.data))},
                               {DNNL_ARG_WEIGHTS, memory(c->k_transposed, engine, const_cast<float*>(p.k.data))},
                               {DNNL_ARG_DST, scores_mem},
                               {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
    if (p.scores_out != nullptr) std::memcpy(p.scores_out, scores, score_count * sizeof(float));
    memory rows(c->rows, engine, scores);
    c->softmax.execute(stream, {{DNNL_ARG_SRC, rows}, {DNNL_ARG_DST, rows}, {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
    c->context.execute(stream, {{DNNL_ARG_SRC, scores_mem},
                                {DNNL_ARG_WEIGHTS, memory(c->v, engine, const_cast<float*>(p.v.data))},
                                {DNNL_ARG_DST, memory(c->out, engine, p.out)},
                                {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<float>> BuildAttentionMask(const int32_t* mask_index, const std::vector<int64_t>& dims,
                                                      bool causal, int64_t batch, int64_t q_len, int64_t past_len,
                                                      int64_t kv_len, float filter, bool allow_4d) {
  causal = causal && q_len > 1;
  if (mask_index == nullptr && !causal) return std::vector<float>();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const std::string shape = absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
  if (mask_index != nullptr) {
    const bool ok =
        (rank == 1 && (dims[0] == batch || dims[0] == 2 * batch || dims[0] == 3 * batch + 2)) ||
        (rank == 2 && dims[0] == batch && dims[1] == kv_len) ||
        (rank == 3 && dims[0] == batch && dims[1] == q_len && dims[2] == kv_len) ||
        (rank == 4 && allow_4d && dims[0] == batch && dims[1] == 1 && dims[2] == dims[3] && dims[3] >= kv_len);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the mask ", shape, " must be (B) lengths, (2B) end and start positions, (3B + 2), (B, T) or (B, S, T)",
          allow_4d ? " or (B, 1, M, M) with M >= T" : "", ", with B = ", batch, ", S = ", q_len, ", T = ", kv_len));
    }
  }
  std::vector<float> mask(batch * q_len * kv_len, 0.f);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < q_len; ++s) {
      float* row = mask.data() + (b * q_len + s) * kv_len;
      if (mask_index != nullptr) {
        if (rank == 1) {
          const int64_t end = mask_index[b];
          for (int64_t t = std::max<int64_t>(end, 0); t < kv_len; ++t) row[t] = filter;
          if (dims[0] == 2 * batch) {
            const int64_t start = std::min<int64_t>(mask_index[batch + b], kv_len);
            for (int64_t t = 0; t < start; ++t) row[t] = filter;
          }
        } else {
          const int32_t* raw = rank == 2   ? mask_index + b * kv_len
                               : rank == 3 ? mask_index + (b * q_len + s) * kv_len
                                           : mask_index + (b * dims[2] + past_len + s) * dims[3];
          for (int64_t t = 0; t < kv_len; ++t) row[t] = raw[t] > 0 ? 0.f : filter;
        }
      }
      if (causal) {
        for (int64_t t = past_len + s + 1; t < kv_len; ++t) row[t] = std::numeric_limits<float>::lowest();
      }
    }
  }
  return mask;
}

}  // namespace onyx
