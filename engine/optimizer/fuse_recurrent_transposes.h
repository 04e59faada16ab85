// The Transposes that exported recurrent layers carry around LSTM, GRU and
// RNN (layout 0) folded into the layer: PyTorch's batch-first modules write
// Transpose(X, [1, 0, 2]) before the layer and Transpose(Y, [0, 2, 1, 3])
// (or [2, 0, 1, 3]) after it, two passes over the sequence per layer. The
// layer becomes its com.onyx form with x_layout 1 (X read as [batch, seq,
// input]) and y_layout 2 ([seq, batch, dirs, hidden]) or 1 ([batch, seq,
// dirs, hidden]): the kernel reads and writes those orders directly. A
// Transpose folds only when the layer is its output's only reader (X) or it
// is Y's only reader (Y).
#pragma once

#include "optimizer/graph_transformer.h"

namespace onyx {

class FuseRecurrentTransposes final : public GraphTransformer {
 public:
  const char* name() const override { return "FuseRecurrentTransposes"; }

 private:
  absl::StatusOr<bool> ApplyImpl(Graph& graph) const override;
};

}  // namespace onyx
