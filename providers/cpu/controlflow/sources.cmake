list(APPEND ONYX_CPU_KERNEL_SOURCES
  controlflow/controlflow_kernels.cc
)
