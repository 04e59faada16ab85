// Operator schemas for the default-domain opsets 18-23 (ONNX 1.13-1.18), which
// the onnx library the engine links (1.12) does not know. Registering them in
// onnx's schema registry keeps the checker and shape inference validating
// newer models in full: an op whose signature changed in 18-23 is checked
// against its new inputs, attributes and types, not against its opset-17
// schema. Ops unchanged since 17 keep resolving to their old schema.
//
//   RegisterNewerOpsetSchemas();   // idempotent and thread-safe
//   onnx::checker::check_model(model);
#pragma once

namespace onyx {

// The highest default-domain opset the engine loads.
inline constexpr int kMaxOnnxOpset = 23;
// The highest ai.onnx.ml opset the engine loads.
inline constexpr int kMaxOnnxMlOpset = 5;

// Raises the registry's default-domain range to kMaxOnnxOpset and registers
// every schema of this folder once per process.
void RegisterNewerOpsetSchemas();

}  // namespace onyx
