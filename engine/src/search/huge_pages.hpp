// Large host buffers of the search (the database's residues and names read
// from its cache, a batch's scores) backed by transparent huge pages where
// the kernel gives them only on request: a fresh buffer of tens or hundreds
// of megabytes then costs a few hundred page faults, not tens of thousands.
#pragma once

#include <cstddef>
#include <cstdint>

#include <sys/mman.h>

namespace alignscope::search_memory {

// Advice only: where the kernel has no huge pages (or none on request),
// nothing changes. Only whole 2 MiB pages inside [data, data + bytes).
inline void ask_for_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    const auto at = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t first = (at + huge - 1) & ~(huge - 1);
    const std::uintptr_t last = (at + bytes) & ~(huge - 1);
    if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace alignscope::search_memory
