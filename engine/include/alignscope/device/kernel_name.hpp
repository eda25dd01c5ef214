// The name of a kernel variant as a value: mode × gap model × family (with its
// group size) × lane width, parasail's grammar, e.g. "sw_affine_inter_s16",
// "nw_linear_intra8_s32", "sg_affine_striped_s8". One format and one parse for
// every backend, the timeline, verify, bench, the store, the CLI and the GUI.
#pragma once

#include <alignscope/align/alignment.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace alignscope {

// The lanes a kernel computes in. S16x2 packs two 16-bit cells (two pairs or
// two queries) into one 32-bit register.
enum class KernelWidth { S8, S16, S32, S64, S16x2 };

// The word of a width in a name: "s8", "s16", "s32", "s64", "s16x2".
std::string_view to_string(KernelWidth width);
// Bits of one cell (16 for S16x2).
int bits_of(KernelWidth width);

struct KernelName {
    AlignmentMode mode = AlignmentMode::Local;  // "sw" local, "nw" global, "sg" semi-global
    bool linear = false;                        // "linear" (open == extend) or "affine"
    // What the kernel is: "inter", "intra" (GPU pairwise), "striped", "scan"
    // (parasail), "scalar", "myersmiller" (the reference), "search" (the GPU
    // database scan), "strips" (GPU long pair), "reference" (the CPU scan's
    // 64-bit fallback). Lower-case letters only; a new family needs no change
    // here.
    std::string family;
    // The family's size, written right after it: threads per pair for "intra"
    // ("intra8"), rows per strip for "strips" ("strips16"). 0 = the family's
    // default, written without a number.
    int group = 0;
    KernelWidth width = KernelWidth::S32;

    // "sw_affine_intra8_s16".
    std::string format() const;
    // The inverse of format(). Throws Error saying what is wrong with `text`
    // and what a name looks like.
    static KernelName parse(std::string_view text);
    // parse() that answers nullopt instead of throwing.
    static std::optional<KernelName> try_parse(std::string_view text);

    friend bool operator==(const KernelName&, const KernelName&) = default;
};

// "sw", "nw" or "sg"; and back (nullopt for any other word).
std::string_view mode_word(AlignmentMode mode);
std::optional<AlignmentMode> mode_from_word(std::string_view word);

// A name in today's grammar whose family word an earlier version used, in
// today's words; nullopt for any other text, today's names included. The
// GPU database scan's family was "dbscan", which reads as the clustering
// algorithm: "sw_affine_dbscan_s16x2" is "sw_affine_search_s16x2".
std::optional<KernelName> read_renamed_kernel_name(std::string_view text);

// A kernel name as stored in a project or shown on a timeline: the names of
// today (KernelName::parse) and those earlier versions wrote, mapped to today's
// (read_renamed_kernel_name; "long_strips_r8_local_k4s4" is
// "sw_affine_strips8_s32": the strip kernel ran every mode with affine cells;
// its kernel and stream counts belong to the strategy, and a non-local strip
// kernel is read as global). nullopt for a name that is neither (a copy on the
// timeline, "H2D", a CPU worker's "cpu:sw").
std::optional<KernelName> read_stored_kernel_name(std::string_view text);

// A stored kernel column (one name, or several joined by commas as a search
// that ran several kernels stores them) in today's words: each name
// read_stored_kernel_name knows as today's, anything else ("H2D",
// "cpu:sw") as stored.
std::string read_stored_kernel_names(std::string_view text);

}  // namespace alignscope
