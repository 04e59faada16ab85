list(APPEND ONYX_CPU_KERNEL_SOURCES
  ml/encoders.cc
  ml/features.cc
  ml/label_encoder.cc
  ml/linear.cc
  ml/ml_kernels.cc
  ml/scale.cc
  ml/svm.cc
  ml/tree_classifier.cc
  ml/tree_ensemble.cc
  ml/tree_kernels.cc
)

# Unit tests of the ai.onnx.ml family (GTest; run by ctest as ml_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(ml_kernel_tests
    ml/encoders_test.cc
    ml/linear_scale_test.cc
    ml/map_ops_test.cc
    ml/svm_test.cc
    ml/tree_ensemble_test.cc
  )
  target_link_libraries(ml_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(ml_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
