// The GPU memory of the profile filter scanner, worked out on the host before
// anything is allocated: the targets' part (residues, offsets, per-target
// buffers), one model's part (filter tables, Forward model and row scratch) and
// the slices of consecutive targets that fit a budget. Header-only, no CUDA.
#pragma once

#include "filter_layout.hpp"
#include "forward_lanes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace alignscope::kernels::profile {

// Device bytes per loaded target: its offset (8), the work order (4), the
// kernels' result (4), MSV's length cost (1), the Viterbi filter's (2), the
// work list and its order (4 + 4), and Forward's length model (8), result (8)
// and first row (8).
inline constexpr std::uint64_t kProfileBytesPerTarget = 8 + 4 + 4 + 1 + 2 + 4 + 4 + 8 + 8 + 8;

// Device bytes of one Forward row's specials (E N J B C Scale).
inline constexpr std::uint64_t kForwardRowBytes = kForwardSpecials * sizeof(float);

// What the Forward launch shape depends on.
struct ProfileDeviceShape {
    int sm_count = 1;
    int forward_threads = 64;          // per block (forward_threads_per_block())
    std::uint64_t forward_shared = 0;  // shared memory a block may take for its rows (half an SM's, at most the opt-in)
};

// One model's device bytes: the MSV cost stripes, the Viterbi filter's tables,
// the Forward model's striped floats and, where a block's rows do not fit its
// shared memory, the rows' scratch (three rows of Q floats per thread of the
// largest grid). `codes` is the alphabet's residue codes (MsvProfile::codes).
inline std::uint64_t profile_model_bytes(int length, int codes, const ProfileDeviceShape& device) {
    const auto u = [](long long v) { return static_cast<std::uint64_t>(v); };
    std::uint64_t bytes = 4;  // the work counter
    if (const int q = segments_for(length, 64)) bytes += u(codes) * u(q) * 32 * sizeof(std::uint32_t);
    if (const int q = segments_for(length, 32)) bytes += u(8 + codes) * u(q) * 32 * sizeof(std::int16_t);
    const int Q = std::max(2, (length - 1) / 4 + 1);  // stripe_forward_profile()
    bytes += u(Q) * 4 * u(8 + codes) * sizeof(float);
    const std::uint64_t block_rows = 3 * u(Q) * u(device.forward_threads) * sizeof(float);
    if (block_rows > device.forward_shared)
        bytes += 3 * u(Q) * u(std::max(1, device.sm_count)) * 16 * u(device.forward_threads) * sizeof(float);
    return bytes;
}

// Consecutive targets [begin, end) loaded and scanned together.
struct TargetSlice {
    std::uint32_t begin = 0, end = 0;
    std::uint64_t residues = 0;
    bool operator==(const TargetSlice&) const = default;
};

inline std::uint64_t slice_bytes(std::uint64_t targets, std::uint64_t residues) {
    return std::max<std::uint64_t>(residues, 1) + kProfileBytesPerTarget * targets + sizeof(std::uint64_t);
}

struct ProfileMemoryPlan {
    std::vector<TargetSlice> slices;  // empty when even the longest target does not fit
    std::uint64_t targets_bytes = 0;  // the largest slice's device bytes
    std::uint64_t model_bytes = 0;    // the model part the plan was made with
    std::uint64_t rows_bytes = 0;     // left for Forward's rows beside the largest slice
    std::uint64_t least_rows = 0;     // the longest target's Forward rows
    std::uint64_t needed = 0;         // the smallest budget that takes every target one slice at a time
};

// Slices of the targets (offsets as ProfileTargets keeps them, targets + 1
// entries) such that a slice, the model part and the longest target's Forward
// rows fit `budget`; one slice when everything fits. rows_bytes is what the
// budget leaves for Forward's rows beside the largest slice.
inline ProfileMemoryPlan plan_profile_memory(std::span<const std::uint64_t> offsets, std::uint64_t budget,
                                             std::uint64_t model_bytes) {
    ProfileMemoryPlan plan;
    plan.model_bytes = model_bytes;
    const std::size_t n = offsets.empty() ? 0 : offsets.size() - 1;
    std::uint64_t longest = 0;
    for (std::size_t t = 0; t < n; ++t) longest = std::max(longest, offsets[t + 1] - offsets[t]);
    plan.least_rows = (longest + 1) * kForwardRowBytes;
    plan.needed = slice_bytes(n ? 1 : 0, longest) + model_bytes + plan.least_rows;
    if (budget < plan.needed) return plan;
    const std::uint64_t room = budget - model_bytes - plan.least_rows;
    TargetSlice slice;
    for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t L = offsets[t + 1] - offsets[t];
        if (slice.end > slice.begin && slice_bytes(slice.end - slice.begin + 1, slice.residues + L) > room) {
            plan.slices.push_back(slice);
            slice = TargetSlice{static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(t), 0};
        }
        slice.end = static_cast<std::uint32_t>(t + 1);
        slice.residues += L;
    }
    plan.slices.push_back(slice);
    for (const TargetSlice& s : plan.slices)
        plan.targets_bytes = std::max(plan.targets_bytes, slice_bytes(s.end - s.begin, s.residues));
    plan.rows_bytes = budget - model_bytes - plan.targets_bytes;
    return plan;
}

// The slice holding target t.
inline std::size_t slice_of(const std::vector<TargetSlice>& slices, std::uint32_t t) {
    const auto it = std::upper_bound(slices.begin(), slices.end(), t,
                                     [](std::uint32_t v, const TargetSlice& s) { return v < s.begin; });
    return static_cast<std::size_t>(it - slices.begin()) - 1;
}

}  // namespace alignscope::kernels::profile
