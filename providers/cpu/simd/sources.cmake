list(APPEND ONYX_CPU_KERNEL_SOURCES
  simd/row_kernels.cc
  simd/stem_conv.cc
  simd/pointwise_conv.cc
  simd/vector_math.cc
)

# Unit tests of the vector math (GTest; every SIMD target the CPU runs).
if(ONYX_BUILD_TESTS)
  add_executable(simd_tests simd/pointwise_conv_test.cc simd/row_kernels_test.cc simd/stem_conv_test.cc simd/vector_math_test.cc)
  target_link_libraries(simd_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util GTest::gtest_main)
  gtest_discover_tests(simd_tests DISCOVERY_TIMEOUT 60)
endif()
