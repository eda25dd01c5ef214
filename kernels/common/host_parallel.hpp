// Spreading host-side work of a batch (encoding, packing, turning results into
// Alignments) over CPU threads, so the host keeps up with the GPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace alignscope::kernels {

// Calls body(begin, end) on disjoint chunks of [0, count) from up to `threads`
// threads (0 = all cores); rethrows the first exception a chunk threw.
template <typename Body>
void parallel_chunks(std::size_t count, int threads, Body&& body, std::size_t min_chunk = 256) {
    if (count == 0) return;
    unsigned workers = threads > 0 ? static_cast<unsigned>(threads) : std::max(1u, std::thread::hardware_concurrency());
    workers = static_cast<unsigned>(std::min<std::size_t>(workers, (count + min_chunk - 1) / min_chunk));
    if (workers <= 1) {
        body(std::size_t{0}, count);
        return;
    }
    const std::size_t chunk = std::max(min_chunk, count / (workers * 8) + 1);
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&]() {
        while (true) {
            const std::size_t begin = next.fetch_add(chunk);
            if (begin >= count) return;
            try {
                body(begin, std::min(count, begin + chunk));
            } catch (...) {
                std::lock_guard lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next.store(count);
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace alignscope::kernels
