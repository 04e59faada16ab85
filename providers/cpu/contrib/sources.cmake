list(APPEND ONYX_CPU_KERNEL_SOURCES
  contrib/activations.cc
  contrib/attention.cc
  contrib/attention_core.cc
  contrib/attention_kernels.cc
  contrib/contrib_kernels.cc
  contrib/embed_layer_norm.cc
  contrib/fused_conv_gemm.cc
  contrib/fused_matmul.cc
  contrib/layer_norm.cc
  contrib/multi_head_attention.cc
  contrib/norm_util.cc
  contrib/qlinear_concat.cc
  contrib/qlinear_elementwise.cc
  contrib/qlinear_pool.cc
  contrib/qlinear_util.cc
  contrib/quant_matmul.cc
)

# Unit tests of the contrib kernels' pieces (GTest; run by ctest as
# contrib_kernel_tests); their values against ONNX Runtime's are
# tests/conformance/contrib_ops.
if(ONYX_BUILD_TESTS)
  add_executable(contrib_kernel_tests contrib/contrib_kernels_test.cc)
  target_link_libraries(contrib_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(contrib_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
