#include "providers/cuda/device_runtime.h"

namespace onyx {

ScopedDevice::ScopedDevice(DeviceRuntime& runtime, int device) : runtime_(runtime) {
  absl::StatusOr<int> current = runtime_.GetDevice();
  if (!current.ok()) {
    status_ = current.status();
    return;
  }
  // Switching costs a driver call; threads that stay on one device skip it.
  if (*current == device) return;
  status_ = runtime_.SetDevice(device);
  if (status_.ok()) previous_ = *current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) runtime_.SetDevice(previous_).IgnoreError();
}

}  // namespace onyx
