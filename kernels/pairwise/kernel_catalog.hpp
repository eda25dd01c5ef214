// The names of the GPU pairwise kernels and what each one is: mode × gap model
// × family × lane width (parasail's grammar), e.g. "sw_affine_inter_s16",
// "nw_linear_intra_s32". The name a kernel carries is the name the timeline
// shows and the one `--kernel` accepts. Plain C++: the tests use it without a GPU.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::kernels {

// inter: one thread (one 16-bit lane with s16) per pair, for many short pairs;
// intra: a group of G = 4, 8, 16 or 32 threads of a warp per pair (two pairs
// with s16), anti-diagonal wavefront with warp shuffles, for pairs of a few
// hundred to several thousand residues. A strip of G * 8 query rows sweeps the
// target, so G follows the query length (little padding in the last strip)
// and how many pairs there are to fill the device.
enum class KernelFamily { Inter, Intra };
inline constexpr int kIntraGroups[] = {4, 8, 16, 32};
// s16: two pairs per 32-bit register with Hopper DPX instructions, results
// checked for saturation and recomputed at s32 when they may have saturated.
enum class LaneWidth { S16, S32 };

struct KernelVariant {
    AlignmentMode mode = AlignmentMode::Local;
    bool linear = false;
    KernelFamily family = KernelFamily::Inter;
    LaneWidth width = LaneWidth::S32;
    int group = 0;  // threads per pair; 0 = the family's default (inter 1, intra 32)

    int threads_per_pair() const { return family == KernelFamily::Inter ? 1 : (group > 0 ? group : 32); }

    // Its name (device/kernel_name.hpp): "intra" is a warp per pair, "intra8"
    // a group of 8 threads.
    KernelName kernel_name() const {
        const bool inter = family == KernelFamily::Inter;
        return KernelName{mode, linear, inter ? "inter" : "intra",
                          inter || threads_per_pair() == 32 ? 0 : threads_per_pair(),
                          width == LaneWidth::S16 ? KernelWidth::S16 : KernelWidth::S32};
    }
    std::string name() const { return kernel_name().format(); }
    bool operator==(const KernelVariant& other) const {
        return mode == other.mode && linear == other.linear && family == other.family && width == other.width &&
               threads_per_pair() == other.threads_per_pair();
    }
};

// Every kernel this backend has for a job's mode and gap model.
inline std::vector<KernelVariant> variants_for(AlignmentMode mode, bool linear) {
    std::vector<KernelVariant> out;
    for (LaneWidth width : {LaneWidth::S16, LaneWidth::S32})
        out.push_back({mode, linear, KernelFamily::Inter, width, 1});
    for (int group : kIntraGroups)
        for (LaneWidth width : {LaneWidth::S16, LaneWidth::S32})
            out.push_back({mode, linear, KernelFamily::Intra, width, group});
    return out;
}

// Parses a --kernel name for a job of the given mode and gap model. Throws
// Error naming --kernel and listing the kernels that fit the job when the name
// is unknown or belongs to another mode or gap model.
inline KernelVariant parse_kernel_name(std::string_view name, AlignmentMode mode, bool linear) {
    const std::optional<KernelName> wanted = KernelName::try_parse(name);
    const auto candidates = variants_for(mode, linear);
    for (const KernelVariant& v : candidates)
        if (wanted && v.kernel_name() == *wanted) return v;
    std::string list;
    for (const KernelVariant& v : candidates) list += (list.empty() ? "" : ", ") + v.name();
    std::string why = "is not a GPU kernel";
    if (wanted)
        for (const KernelVariant& v : variants_for(wanted->mode, wanted->linear))
            if (v.kernel_name() == *wanted && (wanted->mode != mode || wanted->linear != linear))
                why = "is a kernel for " + std::string(to_string(wanted->mode)) +
                      (wanted->linear ? " linear" : " affine") + " alignment, but the job is " +
                      std::string(to_string(mode)) + (linear ? " linear" : " affine");
    throw Error("--kernel '" + std::string(name) + "' " + why + "; kernels for this job: " + list);
}

// Every GPU pairwise kernel, of every mode and gap model.
inline std::vector<KernelName> all_pairwise_kernel_names() {
    std::vector<KernelName> out;
    for (AlignmentMode mode : {AlignmentMode::Local, AlignmentMode::Global, AlignmentMode::SemiGlobal})
        for (bool linear : {false, true})
            for (const KernelVariant& v : variants_for(mode, linear)) out.push_back(v.kernel_name());
    return out;
}

}  // namespace alignscope::kernels
