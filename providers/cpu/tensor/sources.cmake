list(APPEND ONYX_CPU_KERNEL_SOURCES
  tensor/cast.cc
  tensor/center_crop_pad.cc
  tensor/col2im.cc
  tensor/concat_split.cc
  tensor/constant.cc
  tensor/copy_util.cc
  tensor/expand_tile.cc
  tensor/gather.cc
  tensor/gather_util.cc
  tensor/onehot.cc
  tensor/pad.cc
  tensor/quantize.cc
  tensor/random.cc
  tensor/regex_full_match.cc
  tensor/reshape.cc
  tensor/resize.cc
  tensor/resize_plan.cc
  tensor/reverse_sequence.cc
  tensor/scatter.cc
  tensor/sequence.cc
  tensor/slice.cc
  tensor/string_normalizer.cc
  tensor/string_ops.cc
  tensor/tensor_kernels.cc
  tensor/tfidf_vectorizer.cc
  tensor/topk.cc
  tensor/transpose.cc
  tensor/trilu.cc
  tensor/unique.cc
  tensor/where.cc
)

# Unit tests of the tensor family (GTest; run by ctest as tensor_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(tensor_kernel_tests
    tensor/cast19_test.cc
    tensor/cast_test.cc
    tensor/center_crop_pad_test.cc
    tensor/col2im_test.cc
    tensor/copy_util_test.cc
    tensor/opset23_test.cc
    tensor/optional_test.cc
    tensor/pad_test.cc
    tensor/quantize_test.cc
    tensor/resize_test.cc
    tensor/scatter_test.cc
    tensor/split_test.cc
    tensor/string_ops_test.cc
    tensor/tensor_ops_test.cc
  )
  target_link_libraries(tensor_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(tensor_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
