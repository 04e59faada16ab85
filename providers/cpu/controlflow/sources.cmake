list(APPEND ONYX_CPU_KERNEL_SOURCES
  controlflow/controlflow_kernels.cc
  controlflow/if.cc
  controlflow/loop.cc
  controlflow/scan.cc
  controlflow/sequence_map.cc
  controlflow/stacking.cc
)
