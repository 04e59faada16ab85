list(APPEND ONYX_CPU_KERNEL_SOURCES
  controlflow/controlflow_kernels.cc
  controlflow/if.cc
  controlflow/loop.cc
  controlflow/scan.cc
  controlflow/sequence_map.cc
  controlflow/stacking.cc
)

# Unit tests of If, Loop and Scan on hand-built subgraphs (GTest; run by ctest
# as controlflow_kernel_tests).
if(ONYX_BUILD_TESTS)
  add_executable(controlflow_kernel_tests controlflow/controlflow_kernels_test.cc)
  target_link_libraries(controlflow_kernel_tests PRIVATE onyx_runtime_testing onyx_engine_internal onyx_test_util
                        GTest::gtest_main)
  gtest_discover_tests(controlflow_kernel_tests DISCOVERY_TIMEOUT 60)
endif()
