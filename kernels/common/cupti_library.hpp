// CUPTI, loaded at run time: the package runs where the CUDA toolkit's CUPTI
// (or the NVIDIA driver) is missing, and the timeline falls back to CUDA events.
// Only the Activity API calls the timeline makes are looked up.
#pragma once

#include <cupti.h>

namespace alignscope::kernels {

struct CuptiLibrary {
    decltype(&cuptiActivityRegisterCallbacks) activity_register_callbacks = nullptr;
    decltype(&cuptiActivityEnable) activity_enable = nullptr;
    decltype(&cuptiActivityDisable) activity_disable = nullptr;
    decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
    decltype(&cuptiActivityGetNextRecord) activity_get_next_record = nullptr;
    decltype(&cuptiActivityPushExternalCorrelationId) activity_push_external_correlation_id = nullptr;
    decltype(&cuptiActivityPopExternalCorrelationId) activity_pop_external_correlation_id = nullptr;
    decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
};

// The process's CUPTI, opened on first use (libcupti.so.<CUDA major> on the
// loader's path, then the toolkit's usual folders); nullptr when it cannot be
// opened or lacks a function, with the reason in *why when given.
const CuptiLibrary* cupti_library(const char** why = nullptr);

}  // namespace alignscope::kernels
