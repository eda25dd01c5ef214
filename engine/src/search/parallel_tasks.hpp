// Host work of the search cut into independent pieces and run on several
// cores (reading and checking a database cache, encoding a database): the
// pieces are taken in turn by up to 16 threads, and the error of the lowest
// piece that failed is the one raised, as a serial loop would raise it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace alignscope::search_tasks {

// Threads for work of `items` independent pieces: the cores, at most 16
// (past that, memory bandwidth is spent).
inline std::size_t workers_for(std::size_t items) {
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    return std::max<std::size_t>(1, std::min<std::size_t>({items, cores, 16}));
}

// task(0) .. task(count - 1) on workers_for(count) threads; the error of the
// lowest task that failed is rethrown.
template <typename Task>
void run_tasks(std::size_t count, const Task& task) {
    std::vector<std::exception_ptr> failures(count);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t k = next.fetch_add(1); k < count; k = next.fetch_add(1)) {
            try {
                task(k);
            } catch (...) {
                failures[k] = std::current_exception();
            }
        }
    };
    std::vector<std::thread> threads;
    try {
        for (std::size_t w = 1; w < workers_for(count); ++w) threads.emplace_back(work);
    } catch (const std::system_error&) {
        // No more threads: those there (and this one) do the rest.
    }
    work();
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

}  // namespace alignscope::search_tasks
