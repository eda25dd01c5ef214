// The vector a GPU job returns its Alignments in (or the caller's, kept from
// job to job, where it is not the job's size yet), made ready for the results:
// a million of them are 320 MB that the kernel would otherwise fault in page
// by page on one thread (0.15 s on an H100 host, longer than the kernels), so
// large ones have their pages made present by several threads at once first.
// The job's other large buffers (the pairs' lengths) are made the same way.
#pragma once

#include <alignscope/align/alignment.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace alignscope::kernels {

// Below this the pages are few, or already the process's (the allocator keeps
// blocks of a few tens of megabytes between jobs): construction alone is faster.
inline constexpr std::size_t kPopulatedResultBytes = std::size_t{64} << 20;

// Makes the pages of [data, data + bytes) present and writable from up to
// `threads` threads (whole pages inside the range only). Where the system
// cannot (MADV_POPULATE_WRITE needs Linux 5.14), nothing happens and the
// pages fault in when written, as without it.
inline void populate_pages(void* data, std::size_t bytes, int threads) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    constexpr std::uintptr_t page = 4096;
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t first = (address + page - 1) & ~(page - 1), last = (address + bytes) & ~(page - 1);
    if (last <= first) return;
    const std::size_t pages = (last - first) / page;
    const auto workers = static_cast<std::size_t>(
        std::clamp<std::size_t>(static_cast<std::size_t>(threads), 1, std::max<std::size_t>(1, pages / 1024)));
    // In slices of 256 KiB: each call holds the process's memory map for
    // reading while its pages are made, and every mmap or munmap meanwhile (a
    // thread's stack, another large buffer) waits for it. On the H100 host (a
    // virtual machine whose fresh pages come at about 2.5 GB/s whatever the
    // thread count) slices of 2 MiB held the job's own thread about 90 ms
    // before its first kernel.
    constexpr std::uintptr_t slice = std::uintptr_t{256} << 10;
    auto populate = [&](std::size_t w) {
        const std::uintptr_t from = first + pages * w / workers * page, to = first + pages * (w + 1) / workers * page;
        for (std::uintptr_t at = from; at < to; at += slice)
            (void)madvise(reinterpret_cast<void*>(at), std::min(slice, to - at), MADV_POPULATE_WRITE);
    };
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(populate, w);
    populate(0);
    for (auto& thread : pool) thread.join();
#else
    (void)data;
    (void)bytes;
    (void)threads;
#endif
}

// v resized to `count` elements, the pages of a large new buffer made present
// first by up to `threads` threads (0 = all cores, at most 4).
template <typename T>
void resize_present(std::vector<T>& v, std::size_t count, int threads, std::size_t threshold_bytes = 4 << 20) {
    if (count > v.capacity() && count * sizeof(T) >= threshold_bytes) {
        v.reserve(count);
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        populate_pages(v.data() + v.size(), (count - v.size()) * sizeof(T),
                       std::min(4, threads > 0 ? std::min(threads, cores) : cores));
    }
    v.resize(count);
}

// `count` default Alignments; `threads` (0 = all cores, at most 4 used) make
// the pages of a large vector present before they are constructed.
inline std::vector<Alignment> make_result_vector(std::size_t count, int threads) {
    std::vector<Alignment> out;
    resize_present(out, count, threads, kPopulatedResultBytes);
    return out;
}

}  // namespace alignscope::kernels
