// The names of the GPU pairwise kernels and what each one is: mode × gap model
// × family × lane width (parasail's grammar), e.g. "sw_affine_inter_s16",
// "nw_linear_intra_s32". The name a kernel carries is the name the timeline
// shows and the one `--kernel` accepts. Plain C++: the tests use it without a GPU.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/error.hpp>

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

    // "intra" is a warp per pair; "intra8" a group of 8 threads.
    std::string name() const {
        std::string out = mode == AlignmentMode::Global ? "nw" : mode == AlignmentMode::Local ? "sw" : "sg";
        out += linear ? "_linear" : "_affine";
        if (family == KernelFamily::Inter) out += "_inter";
        else out += threads_per_pair() == 32 ? "_intra" : "_intra" + std::to_string(threads_per_pair());
        out += width == LaneWidth::S16 ? "_s16" : "_s32";
        return out;
    }
    bool operator==(const KernelVariant& other) const {
        return mode == other.mode && linear == other.linear && family == other.family && width == other.width &&
               threads_per_pair() == other.threads_per_pair();
    }
};

// Every kernel this backend has for a job's mode and gap model.
inline std::vector<KernelVariant> variants_for(AlignmentMode mode, bool linear) {
    std::vector<KernelVariant> out;
    for (LaneWidth width : {LaneWidth::S16, LaneWidth::S32}) out.push_back({mode, linear, KernelFamily::Inter, width, 1});
    for (int group : kIntraGroups)
        for (LaneWidth width : {LaneWidth::S16, LaneWidth::S32})
            out.push_back({mode, linear, KernelFamily::Intra, width, group});
    return out;
}

// Parses a --kernel name for a job of the given mode and gap model. Throws
// Error naming --kernel and listing the kernels that fit the job when the name
// is unknown or belongs to another mode or gap model.
inline KernelVariant parse_kernel_name(std::string_view name, AlignmentMode mode, bool linear) {
    const auto candidates = variants_for(mode, linear);
    for (const KernelVariant& v : candidates)
        if (v.name() == name) return v;
    std::string list;
    for (const KernelVariant& v : candidates) list += (list.empty() ? "" : ", ") + v.name();
    std::string why = "is not a GPU kernel";
    for (AlignmentMode other : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal})
        for (bool other_linear : {false, true})
            for (const KernelVariant& v : variants_for(other, other_linear))
                if (v.name() == name)
                    why = "is a kernel for " + std::string(to_string(other)) + (other_linear ? " linear" : " affine") +
                          " alignment, but the job is " + std::string(to_string(mode)) +
                          (linear ? " linear" : " affine");
    throw Error("--kernel '" + std::string(name) + "' " + why + "; kernels for this job: " + list);
}

}  // namespace alignscope::kernels
