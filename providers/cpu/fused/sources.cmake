list(APPEND ONYX_CPU_KERNEL_SOURCES
  fused/concat_scale_shift.cc
  fused/fused_conv.cc
  fused/fused_gemm.cc
  fused/fused_kernels.cc
  fused/fused_matmul.cc
  fused/gelu.cc
  fused/layer_norm.cc
  fused/masked_softmax.cc
  fused/transposed_matmul.cc
)

# Unit tests of the fused kernels against the unfused compositions (GTest; run
# by ctest as fused_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(fused_kernel_tests fused/fused_kernels_test.cc)
  target_link_libraries(fused_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(fused_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
