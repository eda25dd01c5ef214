// Completing the GPU's alignments on the host: from the M/I/D runs its
// traceback pass packs, the aligned rows, the '='/'X' CIGAR, the statistics
// and the path's score in one walk, as complete_alignment() makes them, with
// the scheme's lookups made tables once per job. Plain C++: the tests check it
// against complete_alignment without a GPU.
#pragma once

#include "pass_types.hpp"

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace alignscope::kernels {

class PathCompletion {
public:
    explicit PathCompletion(const ScoringScheme& scheme);

    // Fills a.cigar, a.query_aligned, a.target_aligned and a.stats of an
    // alignment whose coordinates are set, from `count` runs (length << 2 |
    // CigarCode, pass_types.hpp), and returns the path's score: what building
    // the CIGAR of 'M', 'I', 'D' runs and calling complete_alignment() gives,
    // including its Error where the path leaves a sequence or meets a residue
    // the matrix does not score (that case runs complete_alignment itself).
    std::int64_t complete(Alignment& a, const std::uint32_t* runs, std::uint32_t count, std::string_view query,
                          std::string_view target) const;

private:
    // The walk for paths inside both sequences over scored residues; false
    // (with `a` partly written) where that is not so.
    bool walk(Alignment& a, const std::uint32_t* runs, std::uint32_t count, std::string_view query,
              std::string_view target, std::int64_t& score) const;

    const ScoringScheme& scheme_;
    int letters_ = 0;
    std::array<std::int16_t, 256> index_{};  // byte -> matrix index, -1 where unscored (letters and encoded codes)
    std::array<char, 256> letter_{};         // byte -> the letter the rows show
    std::vector<int> scores_;                // row-major letters x letters
};

inline PathCompletion::PathCompletion(const ScoringScheme& scheme) : scheme_(scheme) {
    const SubstitutionMatrix& matrix = scheme.matrix;
    letters_ = matrix.size();
    // As complete_alignment reads residues: bytes below 0x20 are matrix
    // codes, the others letters.
    for (int c = 0; c < 256; ++c) {
        const auto byte = static_cast<unsigned char>(c);
        if (c < 0x20) {
            index_[byte] = static_cast<std::int16_t>(c < letters_ ? c : -1);
            letter_[byte] = c < letters_ ? matrix.letters()[static_cast<std::size_t>(c)] : static_cast<char>(c);
        } else {
            index_[byte] = static_cast<std::int16_t>(matrix.index_of(static_cast<char>(c)));
            letter_[byte] = static_cast<char>(c);
        }
    }
    scores_ = matrix.scores();
}

inline std::int64_t PathCompletion::complete(Alignment& a, const std::uint32_t* runs, std::uint32_t count,
                                             std::string_view query, std::string_view target) const {
    std::int64_t score = 0;
    if (walk(a, runs, count, query, target, score)) return score;
    // Off the fast path: complete_alignment names what is wrong.
    a.cigar = Cigar();
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint32_t code = runs[c] & 3u;
        a.cigar.push(code == kCigarM ? 'M' : code == kCigarI ? 'I' : 'D', runs[c] >> 2);
    }
    return complete_alignment(a, query, target, scheme_);
}

inline bool PathCompletion::walk(Alignment& a, const std::uint32_t* runs, std::uint32_t count, std::string_view query,
                                 std::string_view target, std::int64_t& score) const {
    std::int64_t query_span = 0, target_span = 0;
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint32_t code = runs[c] & 3u, length = runs[c] >> 2;
        if (code == 3u) return false;
        if (code != kCigarD) query_span += length;
        if (code != kCigarI) target_span += length;
    }
    const auto inside = [](std::int64_t begin, std::int64_t span, std::size_t length) {
        const auto n = static_cast<std::int64_t>(length);
        return begin >= 1 && begin <= n + 1 && begin - 1 + span <= n;
    };
    if (!inside(a.query_begin, query_span, query.size()) || !inside(a.target_begin, target_span, target.size()))
        return false;

    std::int64_t columns = 0;
    for (std::uint32_t c = 0; c < count; ++c) columns += runs[c] >> 2;
    a.query_aligned.assign(static_cast<std::size_t>(columns), '-');
    a.target_aligned.assign(static_cast<std::size_t>(columns), '-');
    char* qout = a.query_aligned.data();
    char* tout = a.target_aligned.data();
    const auto* q = reinterpret_cast<const unsigned char*>(query.data()) + (a.query_begin - 1);
    const auto* t = reinterpret_cast<const unsigned char*>(target.data()) + (a.target_begin - 1);

    // The resolved runs, gathered in a thread's scratch (no allocation grows
    // one by one). The current run stays in registers and is stored at
    // out[n] after every column, so that a change of operation only moves n
    // on: no branch on the residues, no load of what was just stored. out[0]
    // takes the empty run before the first column.
    thread_local std::vector<CigarOp> resolved;
    if (resolved.size() < static_cast<std::size_t>(columns) + 2) resolved.resize(static_cast<std::size_t>(columns) + 2);
    CigarOp* out = resolved.data();
    std::size_t n = 0;
    char run_op = 0;
    std::uint32_t run_length = 0;
    auto add_run = [&](char op, std::uint32_t length) {
        const bool change = op != run_op;
        out[n] = {run_op, run_length};
        n += change;
        run_length = change ? length : run_length + length;
        run_op = op;
    };
    AlignmentStats stats;
    stats.length = columns;
    std::int64_t sum = 0;
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint32_t code = runs[c] & 3u, length = runs[c] >> 2;
        if (length == 0) continue;
        if (code != kCigarM) {
            const bool insertion = code == kCigarI;
            const unsigned char* from = insertion ? q : t;
            char* to = insertion ? qout : tout;
            for (std::uint32_t k = 0; k < length; ++k) {
                if (index_[from[k]] < 0) return false;
                to[k] = letter_[from[k]];
            }
            const char op = insertion ? 'I' : 'D';
            const bool extends = run_op == op;
            sum -= (extends ? scheme_.gap_extend : scheme_.gap_open) +
                   static_cast<std::int64_t>(length - 1) * scheme_.gap_extend;
            stats.gaps += length;
            stats.gap_opens += !extends;
            add_run(op, length);
            if (insertion) q += length;
            else
                t += length;
            qout += length;
            tout += length;
            continue;
        }
        for (std::uint32_t k = 0; k < length; ++k) {
            const int x = index_[q[k]], y = index_[t[k]];
            if ((x | y) < 0) return false;
            const int s = scores_[static_cast<std::size_t>(x * letters_ + y)];
            const bool same = x == y;
            sum += s;
            stats.identities += same;
            stats.similarities += (same || s > 0);
            qout[k] = letter_[q[k]];
            tout[k] = letter_[t[k]];
            add_run(same ? '=' : 'X', 1);
        }
        q += length;
        t += length;
        qout += length;
        tout += length;
    }
    out[n++] = {run_op, run_length};
    a.cigar.clear();  // its storage kept, for a result buffer reused from job to job
    a.cigar.reserve(n - 1);
    for (std::size_t r = 1; r < n; ++r) a.cigar.push(out[r].op, out[r].length);
    a.stats = stats;
    score = sum;
    return true;
}

}  // namespace alignscope::kernels
