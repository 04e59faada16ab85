list(APPEND ONYX_CPU_KERNEL_SOURCES
  nn/affine_grid.cc
  nn/conv.cc
  nn/conv_attributes.cc
  nn/conv_integer.cc
  nn/conv_transpose.cc
  nn/deform_conv.cc
  nn/depth_to_space.cc
  nn/dnnl_conv.cc
  nn/dnnl_conv_integer.cc
  nn/dnnl_support.cc
  nn/packed_weights.cc
  nn/dropout.cc
  nn/grid_sample.cc
  nn/group_norm.cc
  nn/gru.cc
  nn/image_scaler.cc
  nn/local_norm.cc
  nn/loss.cc
  nn/lstm.cc
  nn/max_unpool.cc
  nn/nn_kernels.cc
  nn/non_max_suppression.cc
  nn/normalization.cc
  nn/pool.cc
  nn/rnn.cc
  nn/rnn_common.cc
  nn/roi_align.cc
)

# Unit tests of the nn family (GTest; run by ctest as nn_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(nn_kernel_tests
    nn/deform_conv_test.cc
    nn/dnnl_conv_integer_test.cc
    nn/dnnl_conv_test.cc
    nn/dnnl_support_test.cc
    nn/grid_sample_test.cc
    nn/group_norm_test.cc
    nn/nn_ops_test.cc
    nn/packed_weights_test.cc
    nn/pool_test.cc
  )
  target_link_libraries(nn_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(nn_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
