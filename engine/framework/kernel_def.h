// KernelDef: what one kernel implementation accepts — op, domain, opset range,
// type constraints, provider — plus hints for the planner (in-place pairs).
//
//   KernelDef def = KernelDefBuilder("Relu").Since(14).Types("T", kAllFloats).Build();
#pragma once

#include <climits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onyx/data_type.h"

namespace onyx {

struct KernelDef {
  std::string op_type;
  std::string domain;         // "" = default ONNX domain
  int since_version = 1;      // matched against the node's resolved schema version
  int end_version = INT_MAX;  // inclusive
  std::string provider;       // filled in by the registry's owner
  // Type parameter name ("T", "T1") -> allowed element types. A parameter not
  // listed accepts every type.
  std::map<std::string, std::vector<DataType>> type_constraints;
  // (input, output) pairs the kernel may compute in place when the input dies.
  std::vector<std::pair<int, int>> may_inplace;
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op_type) { def_.op_type = std::move(op_type); }
  KernelDefBuilder& Domain(std::string domain) {
    def_.domain = std::move(domain);
    return *this;
  }
  // Opset versions [since, end] of the schema this kernel implements.
  KernelDefBuilder& Since(int since, int end = INT_MAX) {
    def_.since_version = since;
    def_.end_version = end;
    return *this;
  }
  KernelDefBuilder& Types(const std::string& param, std::vector<DataType> types) {
    def_.type_constraints[param] = std::move(types);
    return *this;
  }
  KernelDefBuilder& MayInplace(int input, int output) {
    def_.may_inplace.emplace_back(input, output);
    return *this;
  }
  KernelDef Build() const { return def_; }

 private:
  KernelDef def_;
};

// Common type lists.
inline const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                                  DataType::kBFloat16};
inline const std::vector<DataType> kIntTypes = {DataType::kInt8,   DataType::kInt16, DataType::kInt32,
                                                DataType::kInt64,  DataType::kUint8, DataType::kUint16,
                                                DataType::kUint32, DataType::kUint64};
inline const std::vector<DataType> kNumericTypes = {
    DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,   DataType::kInt16,
    DataType::kInt32, DataType::kInt64,  DataType::kUint8,   DataType::kUint16,   DataType::kUint32, DataType::kUint64};
inline const std::vector<DataType> kAllTypes = {
    DataType::kFloat,  DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
    DataType::kInt16,  DataType::kInt32,  DataType::kInt64,   DataType::kUint8,    DataType::kUint16,
    DataType::kUint32, DataType::kUint64, DataType::kBool,    DataType::kString};

}  // namespace onyx
