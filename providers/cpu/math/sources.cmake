list(APPEND ONYX_CPU_KERNEL_SOURCES
  math/activation.cc
  math/binary.cc
  math/bitwise.cc
  math/broadcast.cc
  math/compare.cc
  math/cumsum.cc
  math/dnnl_integer_matmul.cc
  math/dnnl_matmul.cc
  math/det.cc
  math/einsum.cc
  math/element_util.cc
  math/elementwise.cc
  math/gelu.cc
  math/gemm.cc
  math/gemm_util.cc
  math/math_kernels.cc
  math/matmul.cc
  math/matmul_shape.cc
  math/quant_matmul.cc
  math/reduce.cc
  math/reduce_plan.cc
  math/signal.cc
  math/softmax.cc
  math/unary.cc
  math/variadic.cc
)

# Unit tests of the math family (GTest; run by ctest as math_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(math_kernel_tests
    math/activation_test.cc
    math/constant_weight_products_test.cc
    math/bitwise_test.cc
    math/dnnl_matmul_test.cc
    math/math_ops_test.cc
    math/reduce_plan_test.cc
    math/signal_test.cc
  )
  target_link_libraries(math_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(math_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
