// Large host buffers of the search (the database's residues read from its
// cache, a database's codes) made present before they are first written: a
// fresh buffer of 90 MB is 22,000 page faults, 50 ms on one core, which
// several cores share (MADV_POPULATE_WRITE on slices of 2 MiB, as the CUDA
// backend's result vectors do). Huge pages are not asked for: where the
// kernel must find them on request, one buffer took up to 0.27 s.
#pragma once

#include "parallel_tasks.hpp"

#include <cstddef>
#include <cstdint>

#include <sys/mman.h>

namespace alignscope::search_memory {

// The whole pages of [data, data + bytes) present and writable. Where the
// system cannot (MADV_POPULATE_WRITE needs Linux 5.14), nothing happens and
// the pages fault in when written, as without it.
inline void make_present(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    constexpr std::uintptr_t page = 4096, slice = std::uintptr_t{2} << 20;
    const auto at = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t first = (at + page - 1) & ~(page - 1), last = (at + bytes) & ~(page - 1);
    if (last <= first) return;
    // Each call holds the process's memory map for reading one slice long.
    search_tasks::run_tasks((last - first + slice - 1) / slice, [&](std::size_t k) {
        const std::uintptr_t from = first + k * slice;
        (void)::madvise(reinterpret_cast<void*>(from), std::min<std::uintptr_t>(slice, last - from),
                        MADV_POPULATE_WRITE);
    });
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace alignscope::search_memory
