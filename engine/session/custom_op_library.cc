#include "session/custom_op_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/op_domains.h"

// The opaque handles of the C ABI (declared at global scope by custom_op.h).
struct OnyxKernelInfo {
  const onyx::OpKernelInfo& info;
  // Attribute values handed out during create live here until it returns.
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::vector<float>> floats;
  std::vector<std::string> strings;
};

struct OnyxKernelContext {
  onyx::OpKernelContext& ctx;
};

namespace onyx {

namespace {

constexpr size_t kErrorBytes = 1024;

void WriteError(char* error, size_t size, const std::string& message) {
  if (error == nullptr || size == 0) return;
  size_t n = std::min(size - 1, message.size());
  message.copy(error, n);
  error[n] = '\0';
}

bool SupportedType(int32_t type) {
  return type > 0 && static_cast<DataType>(type) != DataType::kString && ElementSize(static_cast<DataType>(type)) > 0;
}

template <typename T>
int GetAttr(const OnyxKernelInfo* info, const char* name, T* value) {
  if (info == nullptr || name == nullptr || value == nullptr || !info->info.HasAttr(name)) return 1;
  auto v = info->info.Attr<T>(name);
  if (!v.ok()) return 1;
  *value = *v;
  return 0;
}

template <typename T>
int GetArrayAttr(OnyxKernelInfo* info, std::vector<std::vector<T>>& store, const char* name, const T** values,
                 size_t* count) {
  if (info == nullptr || name == nullptr || values == nullptr || count == nullptr || !info->info.HasAttr(name)) {
    return 1;
  }
  auto v = info->info.Attr<std::vector<T>>(name);
  if (!v.ok()) return 1;
  store.push_back(*std::move(v));
  *values = store.back().data();
  *count = store.back().size();
  return 0;
}

const OnyxCustomOpApi kApi = {
    ONYX_CUSTOM_OP_ABI_VERSION,
    /*node_name=*/[](const OnyxKernelInfo* info) { return info->info.node().name.c_str(); },
    /*info_input_count=*/[](const OnyxKernelInfo* info) { return info->info.InputCount(); },
    /*info_output_count=*/[](const OnyxKernelInfo* info) { return info->info.OutputCount(); },
    /*info_input_type=*/
    [](const OnyxKernelInfo* info,
       int i) { return i >= 0 && i < info->info.InputCount() ? static_cast<int32_t>(info->info.InputType(i)) : 0; },
    /*info_output_type=*/
    [](const OnyxKernelInfo* info, int i) {
  return i >= 0 && i < info->info.OutputCount() ? static_cast<int32_t>(info->info.OutputType(i)) : 0;
    },
    /*attr_int=*/[](const OnyxKernelInfo* info, const char* name, int64_t* v) { return GetAttr(info, name, v); },
    /*attr_float=*/[](const OnyxKernelInfo* info, const char* name, float* v) { return GetAttr(info, name, v); },
    /*attr_string=*/
    [](const OnyxKernelInfo* info, const char* name, const char** value, size_t* length) {
  std::string s;
  if (value == nullptr || length == nullptr || GetAttr(info, name, &s) != 0) return 1;
  auto* mutable_info = const_cast<OnyxKernelInfo*>(info);
  mutable_info->strings.push_back(std::move(s));
  *value = mutable_info->strings.back().c_str();
  *length = mutable_info->strings.back().size();
  return 0;
},
                      /*attr_ints=*/
    [](const OnyxKernelInfo* info, const char* name, const int64_t** values, size_t* count) {
  auto* m = const_cast<OnyxKernelInfo*>(info);
  return GetArrayAttr(m, m->ints, name, values, count);
},
    /*attr_floats=*/
    [](const OnyxKernelInfo* info, const char* name, const float** values, size_t* count) {
  auto* m = const_cast<OnyxKernelInfo*>(info);
  return GetArrayAttr(m, m->floats, name, values, count);
    },
    /*input_count=*/[](const OnyxKernelContext* ctx) { return ctx->ctx.InputCount(); },
    /*output_count=*/[](const OnyxKernelContext* ctx) { return ctx->ctx.OutputCount(); },
    /*input=*/
    [](const OnyxKernelContext* ctx, int i, OnyxTensorView* view) {
  if (view == nullptr || i < 0 || i >= ctx->ctx.InputCount()) return 1;
  const Tensor* t = ctx->ctx.Input(i);
  if (t == nullptr || t->type() == DataType::kString) return 1;
  view->type = static_cast<int32_t>(t->type());
  view->rank = t->dims().size();
  view->dims = t->dims().data();
  view->data = t->raw();
  return 0;
    },
    /*allocate_output=*/
    [](OnyxKernelContext* ctx, int i, int32_t type, const int64_t* dims, size_t rank, void** data, char* error,
       size_t error_size) {
  if (data == nullptr || i < 0 || i >= ctx->ctx.OutputCount()) {
    WriteError(error, error_size,
               absl::StrCat("allocate_output: output index ", i, " out of range [0, ", ctx->ctx.OutputCount(), ")"));
    return 1;
  }
  if (!SupportedType(type)) {
    WriteError(error, error_size, absl::StrCat("allocate_output: unsupported element type ", type));
    return 1;
  }
  if (rank > 0 && dims == nullptr) {
    WriteError(error, error_size, "allocate_output: dims is NULL");
    return 1;
  }
  auto out = ctx->ctx.Output(i, absl::Span<const int64_t>(dims, rank), static_cast<DataType>(type));
  if (!out.ok()) {
    WriteError(error, error_size, std::string(out.status().message()));
    return 1;
  }
  *data = (*out)->mutable_raw();
  return 0;
    },
    };

class CustomOpKernel final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, const OnyxCustomOp* op,
                                                          const std::string& library) {
    const std::string who = absl::StrCat("custom op library '", library, "'");
    if (op->input_count >= 0 && info.InputCount() > op->input_count) {
      return info.Error(absl::StrCat(who, ": ", op->op_type, " takes at most ", op->input_count,
                                     " inputs, the node has ", info.InputCount()));
    }
    if (op->output_count >= 0 && info.OutputCount() > op->output_count) {
      return info.Error(absl::StrCat(who, ": ", op->op_type, " has at most ", op->output_count,
                                     " outputs, the node has ", info.OutputCount()));
    }
    OnyxKernelInfo handle{info, {}, {}, {}};
    char error[kErrorBytes] = {0};
    void* state = op->create(&kApi, &handle, error, sizeof(error));
    if (state == nullptr) {
      return info.Error(absl::StrCat(who, " could not create the kernel: ", error[0] ? error : "no reason given"));
    }
    return std::unique_ptr<OpKernel>(new CustomOpKernel(op, state, who));
  }

  ~CustomOpKernel() override { op_->destroy(state_); }

  absl::Status Compute(OpKernelContext& ctx) const override {
    OnyxKernelContext handle{ctx};
    char error[kErrorBytes] = {0};
    if (op_->compute(state_, &kApi, &handle, error, sizeof(error)) != 0) {
      return ctx.Error(absl::StrCat(who_, " failed: ", error[0] ? error : "no reason given"));
    }
    return absl::OkStatus();
  }

 private:
  CustomOpKernel(const OnyxCustomOp* op, void* state, std::string who) : op_(op), state_(state), who_(std::move(who)) {}

  const OnyxCustomOp* op_;
  void* state_;
  std::string who_;
};

absl::Status CheckTables(const OnyxCustomOpLibrary& lib, const std::string& what) {
  if (lib.domains == nullptr || lib.domain_count == 0) {
    return absl::FailedPreconditionError(absl::StrCat(what, " declares no domain"));
  }
  for (size_t d = 0; d < lib.domain_count; ++d) {
    const OnyxCustomOpDomain& domain = lib.domains[d];
    const std::string name = domain.domain != nullptr ? domain.domain : "";
    if (name.empty() || name == "ai.onnx" || name == "ai.onnx.ml" || name == kOnyxDomain) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": domain ", d, " is '", name, "'; a custom domain must have a name of its own"));
    }
    if (domain.ops == nullptr || domain.op_count == 0) {
      return absl::FailedPreconditionError(absl::StrCat(what, ": domain '", name, "' declares no op"));
    }
    for (size_t i = 0; i < domain.op_count; ++i) {
      const OnyxCustomOp& op = domain.ops[i];
      if (op.op_type == nullptr || op.op_type[0] == '\0' || op.create == nullptr || op.compute == nullptr ||
          op.destroy == nullptr || op.since_version < 1) {
        return absl::FailedPreconditionError(
            absl::StrCat(what, ": op ", i, " of domain '", name,
                         "' lacks a type, a create/compute/destroy function or a since_version >= 1"));
      }
    }
  }
  return absl::OkStatus();
}

struct Cache {
  absl::Mutex mu;
  std::map<std::string, std::unique_ptr<CustomOpLibrary>> by_path ABSL_GUARDED_BY(mu);
};

Cache& GetCache() {
  static Cache* cache = new Cache();
  return *cache;
}

class CustomOpProvider final : public IExecutionProvider {
 public:
  explicit CustomOpProvider(const std::vector<const CustomOpLibrary*>& libraries) {
    std::set<std::pair<std::string, std::string>> taken;
    for (const CustomOpLibrary* library : libraries) {
      for (const auto& [domain, op] : library->registry.Ops()) {
        if (!taken.insert({domain, op}).second) continue;
        for (const auto* entry : library->registry.Entries(domain, op)) registry_.Register(entry->def, entry->factory);
      }
    }
  }
  const char* name() const override { return "custom_ops"; }
  const char* device() const override { return "cpu"; }
  const KernelRegistry& kernel_registry() const override { return registry_; }

 private:
  KernelRegistry registry_;
};

}  // namespace

absl::StatusOr<const CustomOpLibrary*> LoadCustomOpLibrary(const std::string& path) {
  std::error_code fs_error;
  const std::filesystem::path canonical = std::filesystem::canonical(path, fs_error);
  if (fs_error) return absl::NotFoundError(absl::StrCat("custom op library ", path, ": ", fs_error.message()));
  Cache& cache = GetCache();
  absl::MutexLock lock(&cache.mu);
  if (auto it = cache.by_path.find(canonical.string()); it != cache.by_path.end()) return it->second.get();
  const std::string what = absl::StrCat("custom op library ", canonical.string());
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", what, ": ", error != nullptr ? error : "unknown dlopen error"));
  }
  auto entry = reinterpret_cast<OnyxCustomOpLibraryEntryFn>(dlsym(handle, ONYX_CUSTOM_OP_ENTRY_SYMBOL));
  if (entry == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat(what, " is not an onyx custom op library: it has no ", ONYX_CUSTOM_OP_ENTRY_SYMBOL, " symbol"));
  }
  const OnyxCustomOpLibrary* lib = entry(ONYX_CUSTOM_OP_ABI_VERSION);
  if (lib == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", ONYX_CUSTOM_OP_ENTRY_SYMBOL, " returned nothing"));
  }
  if (lib->abi_version != ONYX_CUSTOM_OP_ABI_VERSION) {
    const uint32_t version = lib->abi_version;
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat(what, " has custom op ABI version ", version,
                                                      "; this onyx expects version ", ONYX_CUSTOM_OP_ABI_VERSION));
  }
  if (absl::Status tables = CheckTables(*lib, what); !tables.ok()) {
    dlclose(handle);
    return tables;
  }
  auto library = std::make_unique<CustomOpLibrary>();
  library->path = canonical.string();
  library->name = lib->name != nullptr ? lib->name : canonical.filename().string();
  library->entry = lib;
  for (size_t d = 0; d < lib->domain_count; ++d) {
    const OnyxCustomOpDomain& domain = lib->domains[d];
    for (size_t i = 0; i < domain.op_count; ++i) {
      const OnyxCustomOp* op = &domain.ops[i];
      KernelDef def = KernelDefBuilder(op->op_type).Domain(domain.domain).Since(op->since_version).Build();
      def.provider = "custom_ops";
      library->registry.Register(
          def, [op, name = library->name](const OpKernelInfo& info) { return CustomOpKernel::Create(info, op, name); });
    }
  }
  const CustomOpLibrary* out = library.get();
  cache.by_path.emplace(library->path, std::move(library));
  return out;
}

std::unique_ptr<IExecutionProvider> CreateCustomOpProvider(const std::vector<const CustomOpLibrary*>& libraries) {
  return std::make_unique<CustomOpProvider>(libraries);
}

}  // namespace onyx
