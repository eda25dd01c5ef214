// The result type every aligner returns (CPU reference, linear space, parasail,
// GPU kernels), and the options that choose the alignment problem.
//
// Conventions: the query runs down the DP rows (index i), the target across the
// columns (index j). Coordinates are 1-based and inclusive. Scores are scaled
// integers (see ScoringScheme); convert with ScoringScheme::to_user.
#pragma once

#include <alignscope/align/cigar.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace alignscope {

enum class AlignmentMode { Global, Local, SemiGlobal };

std::string_view to_string(AlignmentMode mode);   // "global", "local", "semiglobal"
AlignmentMode parse_mode(std::string_view name);  // throws Error naming --mode

// Which end gaps cost nothing in semi-global mode. "Gaps at the beginning of the
// query" are target residues left of the query's first aligned residue: when
// query_begin is free the alignment may start at any target position (DP row 0
// is zero). Likewise query_end (last row free), target_begin (column 0 zero),
// target_end (last column free). All four free is the classic overlap alignment;
// query_begin + query_end alone places the whole query inside the target
// ("glocal", read mapping).
struct FreeEndGaps {
    bool query_begin = true;
    bool query_end = true;
    bool target_begin = true;
    bool target_end = true;

    static FreeEndGaps all() { return {}; }
    static FreeEndGaps none() { return {false, false, false, false}; }
    // Parses a comma list of qb,qe,tb,te (or "all", "none"). Throws Error.
    static FreeEndGaps parse(std::string_view spec);
    std::string to_string() const;
    bool operator==(const FreeEndGaps&) const = default;
};

struct AlignOptions {
    AlignmentMode mode = AlignmentMode::Global;
    FreeEndGaps free_ends;  // used in semi-global mode only
    bool traceback = true;  // false: score, end and begin positions only
    // false (with traceback off): score and end positions only. Begins that
    // need a pass of their own (local, semi-global with a free begin) are then
    // left 0; the GPU and the cpu device skip their reverse pass, half the
    // work. The scalar reference (cpu-ref) finds begins anyway and reports them.
    bool begins = true;
};

// The mode as reports show it: "local", "global", "semiglobal[qb,qe]".
std::string describe_mode(const AlignOptions& options);

struct AlignmentStats {
    std::int64_t length = 0;        // alignment columns
    std::int64_t identities = 0;    // columns with identical residues
    std::int64_t similarities = 0;  // columns with a positive substitution score (identities included)
    std::int64_t gaps = 0;          // columns with a gap on either side
    std::int64_t gap_opens = 0;     // runs of gap columns
};

struct Alignment {
    std::string query_id;
    std::string target_id;
    AlignmentMode mode = AlignmentMode::Global;
    std::int64_t score = 0;  // scaled
    // 1-based inclusive coordinates of the aligned region. A local alignment
    // with score 0 is empty: begin = end = 0. Begin positions are set unless
    // AlignOptions::begins was false (then 0 where a pass would find them).
    std::int64_t query_begin = 0, query_end = 0;
    std::int64_t target_begin = 0, target_end = 0;
    std::int64_t query_length = 0, target_length = 0;
    Cigar cigar;                // empty when traceback was off
    std::string query_aligned;  // with '-' for gaps; empty when traceback was off
    std::string target_aligned;
    AlignmentStats stats;  // zero when traceback was off
    std::string device;    // backend that produced it, e.g. "cpu-ref", "cpu", "gpu:0"
    std::string kernel;    // kernel/variant name, e.g. "sw_affine_striped_s16"

    bool has_traceback() const { return !cigar.empty(); }
    double identity() const { return stats.length ? double(stats.identities) / double(stats.length) : 0.0; }
    double similarity() const { return stats.length ? double(stats.similarities) / double(stats.length) : 0.0; }
    // Everything but the path (CIGAR and aligned text), without copying it:
    // what a streamed alignment's sink and writer hold.
    Alignment without_path() const;
};

}  // namespace alignscope
