// NonMaxSuppression: per batch and class, greedy selection of boxes in
// descending score order, dropping boxes whose IoU with a selected box exceeds
// iou_threshold; boxes are corners [y1, x1, y2, x2] in any order
// (center_point_box 0) or [x_center, y_center, width, height] (1).
#include <algorithm>
#include <numeric>

#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

struct Box {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

float Iou(const Box& a, const Box& b) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0.f;
  const float inter = ih * iw;
  const float uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0.f : inter / uni;
}

class NonMaxSuppression final : public OpKernel {
 public:
  explicit NonMaxSuppression(const OpKernelInfo& info)
      : center_point_box_(info.AttrOr<int64_t>("center_point_box", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* boxes_in, RequireInput(ctx, 0, "boxes"));
    ASSIGN_OR_RETURN(const Tensor* scores_in, RequireInput(ctx, 1, "scores"));
    if (boxes_in->rank() != 3 || boxes_in->dims()[2] != 4) {
      return ctx.Error("boxes must be [batches, boxes, 4], received " + DimsToString(boxes_in->dims()));
    }
    const int64_t batches = boxes_in->dims()[0], count = boxes_in->dims()[1];
    if (scores_in->rank() != 3 || scores_in->dims()[0] != batches || scores_in->dims()[2] != count) {
      return ctx.Error(absl::StrCat("scores must be [", batches, ", classes, ", count, "], received ",
                                    DimsToString(scores_in->dims())));
    }
    const int64_t classes = scores_in->dims()[1];
    int64_t max_out = 0;
    float iou_threshold = 0.f, score_threshold = 0.f;
    bool use_score_threshold = false;
    if (const Tensor* t = ctx.Input(2); t != nullptr && t->num_elements() > 0) max_out = ScalarAsInt64(*t);
    if (const Tensor* t = ctx.Input(3); t != nullptr && t->num_elements() > 0) iou_threshold = static_cast<float>(ScalarAsDouble(*t));
    if (const Tensor* t = ctx.Input(4); t != nullptr && t->num_elements() > 0) {
      score_threshold = static_cast<float>(ScalarAsDouble(*t));
      use_score_threshold = true;
    }
    if (iou_threshold < 0.f || iou_threshold > 1.f) {
      return ctx.Error(absl::StrCat("iou_threshold must be in [0, 1], received ", iou_threshold));
    }
    ASSIGN_OR_RETURN(Tensor boxes_f, ConvertNumeric(*boxes_in, DataType::kFloat));
    ASSIGN_OR_RETURN(Tensor scores_f, ConvertNumeric(*scores_in, DataType::kFloat));
    const float* pb = boxes_f.data<float>();
    const float* ps = scores_f.data<float>();
    std::vector<Box> boxes(batches * count);
    for (int64_t i = 0; i < batches * count; ++i) {
      const float* b = pb + i * 4;
      if (center_point_box_) {
        boxes[i] = {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
      } else {
        boxes[i] = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
      }
    }
    std::vector<int64_t> selected;  // triples
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t c = 0; c < classes && max_out > 0; ++c) {
        const float* s = ps + (b * classes + c) * count;
        order.clear();
        for (int64_t i = 0; i < count; ++i) {
          if (!use_score_threshold || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          const Box& box = boxes[b * count + i];
          bool keep = true;
          for (int64_t k : kept) {
            if (Iou(box, boxes[b * count + k]) > iou_threshold) {
              keep = false;
              break;
            }
          }
          if (!keep) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    const int64_t n = static_cast<int64_t>(selected.size()) / 3;
    ASSIGN_OR_RETURN(Tensor* out, ctx.Output(0, {n, 3}, DataType::kInt64));
    std::copy(selected.begin(), selected.end(), out->mutable_data<int64_t>());
    return absl::OkStatus();
  }

 private:
  bool center_point_box_;
};

}  // namespace

void RegisterNonMaxSuppressionKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("NonMaxSuppression").Since(10).Build(), MakeFactory<NonMaxSuppression>());
}

}  // namespace onyx
