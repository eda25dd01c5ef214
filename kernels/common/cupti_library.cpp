// Opens CUPTI with dlopen so that nothing in the programs' NEEDED list is
// part of the CUDA toolkit or the driver (the runtime is linked statically and
// opens the driver itself).
// Compiled only when the toolkit has cupti.h (ALIGNSCOPE_WITH_CUPTI).
#ifdef ALIGNSCOPE_WITH_CUPTI
#include "common/cupti_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

namespace alignscope::kernels {

namespace {

struct Loaded {
    CuptiLibrary api;
    bool ok = false;
    std::string why;
};

template <typename F>
bool bind(void* handle, F& function, const char* name, std::string& why) {
    function = reinterpret_cast<F>(dlsym(handle, name));
    if (!function) why = std::string("CUPTI lacks ") + name;
    return function != nullptr;
}

Loaded load() {
    Loaded loaded;
    // CUPTI's soname carries the toolkit's major version, as the runtime's does.
    const std::string soname = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
    const std::string candidates[] = {soname, "/usr/local/cuda/extras/CUPTI/lib64/" + soname,
                                      "/usr/local/cuda/lib64/" + soname, "/usr/local/cuda/lib/" + soname};
    void* handle = nullptr;
    for (const std::string& name : candidates)
        if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!handle) {
        loaded.why = soname + " not found (CUPTI comes with the CUDA toolkit)";
        return loaded;
    }
    CuptiLibrary& a = loaded.api;
    loaded.ok =
        bind(handle, a.activity_register_callbacks, "cuptiActivityRegisterCallbacks", loaded.why) &&
        bind(handle, a.activity_enable, "cuptiActivityEnable", loaded.why) &&
        bind(handle, a.activity_disable, "cuptiActivityDisable", loaded.why) &&
        bind(handle, a.activity_flush_all, "cuptiActivityFlushAll", loaded.why) &&
        bind(handle, a.activity_get_next_record, "cuptiActivityGetNextRecord", loaded.why) &&
        bind(handle, a.activity_push_external_correlation_id, "cuptiActivityPushExternalCorrelationId", loaded.why) &&
        bind(handle, a.activity_pop_external_correlation_id, "cuptiActivityPopExternalCorrelationId", loaded.why) &&
        bind(handle, a.get_timestamp, "cuptiGetTimestamp", loaded.why);
    // The handle stays open for the life of the process: CUPTI's callbacks
    // may run until exit.
    return loaded;
}

}  // namespace

const CuptiLibrary* cupti_library(const char** why) {
    static const Loaded loaded = load();
    if (why) *why = loaded.ok ? "" : loaded.why.c_str();
    return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace alignscope::kernels
#endif  // ALIGNSCOPE_WITH_CUPTI
