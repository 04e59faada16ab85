// Tensor and Value: the data that crosses the engine's public API.
//
//   onyx::Tensor x = onyx::Tensor::Allocate(onyx::DataType::kFloat, {2, 16});
//   float* p = x.mutable_data<float>();            // row-major, 64-byte aligned
//   onyx::Tensor view = onyx::Tensor::Wrap(DataType::kFloat, {2, 16}, buffer);
//
// A Tensor is a typed, shaped view of a buffer. Copies are shallow: they share the
// buffer (reference counted); Clone() copies the bytes. Wrap() makes a view of
// caller memory that the caller keeps alive (zero-copy feeds and bound outputs).
// String tensors own an array of std::string and are never wrapped.
// Thread-compatible: concurrent readers are fine, writers need exclusive access.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "onyx/data_type.h"

namespace onyx {

using Dims = absl::InlinedVector<int64_t, 6>;

// Product of dims; 1 for a scalar (empty dims).
int64_t NumElements(absl::Span<const int64_t> dims);
// "[2,3,4]"
std::string DimsToString(absl::Span<const int64_t> dims);

class Tensor {
 public:
  Tensor() = default;

  // Owns fresh zero-initialised storage (strings are empty).
  static Tensor Allocate(DataType type, absl::Span<const int64_t> dims);
  // Views `data` without owning it; the caller keeps it alive and sized.
  static Tensor Wrap(DataType type, absl::Span<const int64_t> dims, void* data);
  // Views `data`, keeping `owner` alive for the tensor's lifetime (arena blocks).
  static Tensor FromBuffer(DataType type, absl::Span<const int64_t> dims, void* data, std::shared_ptr<void> owner);

  bool defined() const { return type_ != DataType::kUndefined; }
  DataType type() const { return type_; }
  const Dims& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return num_elements_ * ElementSize(type_); }

  const void* raw() const { return data_; }
  void* mutable_raw() { return data_; }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(data_);
  }

  // Same buffer, new dims with the same element count (checked by the caller).
  Tensor Reshaped(absl::Span<const int64_t> dims) const;
  // Deep copy into fresh storage.
  Tensor Clone() const;
  // True when the tensor does not own its storage (made by Wrap).
  bool is_view() const { return owner_ == nullptr && data_ != nullptr; }
  // What keeps the buffer alive (null for views): two tensors with the same
  // owner and address read the same bytes.
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  DataType type_ = DataType::kUndefined;
  Dims dims_;
  int64_t num_elements_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

// A graph value: a tensor, a sequence of tensors, or an empty optional.
class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence };

  Value() = default;                                                          // an empty optional
  Value(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}  // NOLINT
  static Value Sequence(DataType element_type, std::vector<Tensor> elements);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }

  const Tensor& tensor() const { return tensor_; }
  Tensor& mutable_tensor() { return tensor_; }
  DataType sequence_type() const { return sequence_type_; }
  const std::vector<Tensor>& sequence() const { return sequence_; }
  std::vector<Tensor>& mutable_sequence() { return sequence_; }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  DataType sequence_type_ = DataType::kUndefined;
  std::vector<Tensor> sequence_;
};

}  // namespace onyx
