list(APPEND ONYX_CPU_KERNEL_SOURCES
  fused/fused_conv.cc
  fused/fused_gemm.cc
  fused/fused_kernels.cc
  fused/fused_matmul.cc
  fused/gelu.cc
  fused/layer_norm.cc
)
