// The self-check of an alignment that is never whole in memory: rescore() and
// the statistics of complete_alignment(), computed column run by column run as
// the alignment is produced (the long-pair pipeline's streamed stage 3).
#pragma once

#include <alignscope/align/alignment.hpp>

#include <cstdint>
#include <string_view>

namespace alignscope {

struct ScoringScheme;

class PathScorer {
public:
    // query and target as rescore() takes them (letters, or encoded residues);
    // the path starts at the 1-based positions query_begin and target_begin.
    // Throws Error when a begin lies outside its sequence (beyond length + 1).
    PathScorer(std::string_view query, std::string_view target, std::int64_t query_begin, std::int64_t target_begin,
               const ScoringScheme& scheme);

    // Appends `count` columns of `op` ('=', 'X', 'M', 'I', 'D'). A run that
    // goes on with the operation of the previous call is one gap with it, as in
    // a CIGAR. Throws Error as rescore() does: a column past the end of either
    // sequence, '=' or 'X' disagreeing with the residues, an unknown operation.
    void push(char op, std::uint32_t count = 1);

    std::int64_t score() const { return score_; }
    // As complete_alignment() fills Alignment::stats for the same columns.
    const AlignmentStats& stats() const { return stats_; }
    // The 1-based positions of the next column's residues: the path ends at
    // query_next() - 1, target_next() - 1.
    std::int64_t query_next() const { return qi_; }
    std::int64_t target_next() const { return ti_; }

private:
    std::string_view query_, target_;
    const ScoringScheme& scheme_;
    std::int64_t qi_, ti_;
    std::int64_t score_ = 0;
    char previous_ = 0;
    AlignmentStats stats_;
};

}  // namespace alignscope
