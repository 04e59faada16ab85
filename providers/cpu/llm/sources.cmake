list(APPEND ONYX_CPU_KERNEL_SOURCES
  llm/attention.cc
  llm/attention_shape.cc
  llm/batched_matmul.cc
  llm/llm_kernels.cc
  llm/rms_norm.cc
  llm/rotary_embedding.cc
)

# Unit tests of the LLM family against values from ONNX Runtime 1.30 (GTest;
# run by ctest as llm_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(llm_kernel_tests
    llm/attention_test.cc
    llm/rms_norm_test.cc
    llm/rotary_embedding_test.cc
  )
  target_link_libraries(llm_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(llm_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
