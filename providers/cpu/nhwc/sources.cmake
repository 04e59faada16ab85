# Kernels of the channels-last operators. They are tested through sessions
# against the NCHW kernels (engine/optimizer/nhwc_layout_test.cc) and, for the
# convolution, against a direct loop (nn/dnnl_conv_test.cc).
list(APPEND ONYX_CPU_KERNEL_SOURCES
  nhwc/nhwc_channel_shuffle.cc
  nhwc/nhwc_conv.cc
  nhwc/nhwc_conv_transpose.cc
  nhwc/nhwc_kernels.cc
  nhwc/nhwc_pool.cc
  nhwc/pointwise_residual_conv.cc
)
