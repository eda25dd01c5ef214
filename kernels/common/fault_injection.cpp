// ALIGNSCOPE_FAULT: counts device allocations and kernel launches and fails
// the ones the variable names (see fault_injection.hpp).
#include "common/fault_injection.hpp"

#include <alignscope/error.hpp>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

namespace alignscope::kernels::fault {

namespace {

struct Plan {
    long long alloc_at = 0, launch_at = 0;  // 0: none
};

std::once_flag read_once;
Plan plan;
std::atomic<bool> active{false};
std::atomic<long long> allocations{0}, launches{0};

void read_plan() {
    const char* value = std::getenv("ALIGNSCOPE_FAULT");
    if (!value || !*value) return;
    std::string_view rest(value);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const std::size_t colon = item.find(':');
        const std::string_view kind = item.substr(0, colon);
        long long n = 0;
        const std::string_view digits = colon == std::string_view::npos ? std::string_view() : item.substr(colon + 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 1 ||
            (kind != "alloc" && kind != "launch"))
            throw Error("ALIGNSCOPE_FAULT: '" + std::string(item) +
                        "' is not alloc:N or launch:N (N a whole number from 1; a comma list of these)");
        (kind == "alloc" ? plan.alloc_at : plan.launch_at) = n;
    }
    active.store(plan.alloc_at > 0 || plan.launch_at > 0, std::memory_order_release);
}

bool armed() {
    std::call_once(read_once, read_plan);  // rethrows a malformed value on every call until it parses
    return active.load(std::memory_order_acquire);
}

}  // namespace

cudaError_t before_allocation() {
    if (!armed() || plan.alloc_at == 0) return cudaSuccess;
    if (allocations.fetch_add(1, std::memory_order_relaxed) + 1 != plan.alloc_at) return cudaSuccess;
    std::fprintf(stderr, "ALIGNSCOPE_FAULT: failing allocation %lld\n", plan.alloc_at);
    return cudaErrorMemoryAllocation;
}

cudaError_t after_launch(cudaError_t status) {
    if (!armed() || plan.launch_at == 0) return status;
    if (launches.fetch_add(1, std::memory_order_relaxed) + 1 != plan.launch_at || status != cudaSuccess) return status;
    std::fprintf(stderr, "ALIGNSCOPE_FAULT: failing launch %lld\n", plan.launch_at);
    return cudaErrorLaunchFailure;
}

}  // namespace alignscope::kernels::fault
