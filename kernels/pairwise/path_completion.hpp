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

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
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

    // The CIGAR's runs as the walk resolves them: a change of operation stores
    // the run that ends. out[0] takes the empty run before the first column.
    struct RunWriter {
        CigarOp* out;
        std::size_t n = 0;
        char op = 0;
        std::uint32_t length = 0;

        void add(char run, std::uint32_t columns) {
            if (run != op) {
                out[n++] = {op, length};
                op = run;
                length = 0;
            }
            length += columns;
        }
        // `width` (1 to 64) match columns, bit k of `same` set where column k
        // is an identity: a run starts at each bit that differs from the one
        // before it, and at the first where the current run is no '='/'X'.
        void add_matches(std::uint64_t same, std::uint32_t width) {
            const std::uint64_t all = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
            std::uint64_t starts = (same ^ (same << 1 | std::uint64_t{op == '='})) & all;
            if (op != '=' && op != 'X') starts |= 1;
            std::uint32_t at = 0;
            while (starts) {
                const auto k = static_cast<std::uint32_t>(std::countr_zero(starts));
                starts &= starts - 1;
                out[n++] = {op, length + (k - at)};
                op = (same >> k) & 1 ? '=' : 'X';
                length = 0;
                at = k;
            }
            length += width - at;
        }
        // Stores the last run; returns one past it.
        std::size_t finish() {
            out[n++] = {op, length};
            return n;
        }
    };

    // Copies `n` residues into a row as the letters it shows: bytes from 0x20
    // on as they are, matrix codes as their letters.
    void copy_letters(char* to, const unsigned char* from, std::uint32_t n) const {
        std::memcpy(to, from, n);
        unsigned char least = 0xff;
        for (std::uint32_t k = 0; k < n; ++k) least = std::min(least, from[k]);
        if (least < 0x20)
            for (std::uint32_t k = 0; k < n; ++k) to[k] = letter_[from[k]];
    }

    // A match column's entry, summed over up to 64 columns at once: the score
    // times 2^32, plus 2^16 where a residue is unscored, plus 1 where the pair
    // is similar (identical or scoring above 0). The sums of the low fields
    // stay below 2^16, and that of the scores fits while no score passes
    // kLargestScore (a matrix beyond it takes complete_alignment).
    static constexpr std::int64_t kScoreUnit = std::int64_t{1} << 32, kUnscored = 1 << 16, kSimilar = 1;
    static constexpr std::int64_t kLargestScore = std::int64_t{1} << 24;

    const ScoringScheme& scheme_;
    std::uint32_t unscored_ = 0;              // the index of the bytes the matrix does not score: its size
    std::uint32_t stride_ = 0;                // a row of columns_: size + 1, with the unscored index
    std::array<std::uint16_t, 256> index_{};  // byte -> matrix index (letters and encoded codes), or unscored_
    std::array<char, 256> letter_{};          // byte -> the letter the rows show
    std::vector<std::int64_t> columns_;       // index x index -> the column's entry
    bool packs_scores_ = true;                // no score past kLargestScore
};

inline PathCompletion::PathCompletion(const ScoringScheme& scheme) : scheme_(scheme) {
    const SubstitutionMatrix& matrix = scheme.matrix;
    const int letters = matrix.size();
    unscored_ = static_cast<std::uint32_t>(letters);
    stride_ = unscored_ + 1;
    // As complete_alignment reads residues: bytes below 0x20 are matrix
    // codes, the others letters.
    for (int c = 0; c < 256; ++c) {
        const auto byte = static_cast<unsigned char>(c);
        const int index = c < 0x20 ? (c < letters ? c : -1) : matrix.index_of(static_cast<char>(c));
        index_[byte] = static_cast<std::uint16_t>(index < 0 ? unscored_ : static_cast<std::uint32_t>(index));
        letter_[byte] = c < 0x20 && c < letters ? matrix.letters()[static_cast<std::size_t>(c)] : static_cast<char>(c);
    }
    columns_.assign(static_cast<std::size_t>(stride_) * stride_, kUnscored);
    for (int x = 0; x < letters; ++x)
        for (int y = 0; y < letters; ++y) {
            const std::int64_t s = matrix.score(x, y);
            packs_scores_ = packs_scores_ && s <= kLargestScore && s >= -kLargestScore;
            columns_[static_cast<std::size_t>(x) * stride_ + static_cast<std::size_t>(y)] =
                s * kScoreUnit + (x == y || s > 0 ? kSimilar : 0);
        }
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
    std::int64_t query_span = 0, target_span = 0, columns = 0;
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint32_t code = runs[c] & 3u, length = runs[c] >> 2;
        if (code == 3u || !packs_scores_) return false;
        if (code != kCigarD) query_span += length;
        if (code != kCigarI) target_span += length;
        columns += length;
    }
    const auto inside = [](std::int64_t begin, std::int64_t span, std::size_t length) {
        const auto n = static_cast<std::int64_t>(length);
        return begin >= 1 && begin <= n + 1 && begin - 1 + span <= n;
    };
    if (!inside(a.query_begin, query_span, query.size()) || !inside(a.target_begin, target_span, target.size()))
        return false;

    a.query_aligned.assign(static_cast<std::size_t>(columns), '-');
    a.target_aligned.assign(static_cast<std::size_t>(columns), '-');
    char* qout = a.query_aligned.data();
    char* tout = a.target_aligned.data();
    const auto* q = reinterpret_cast<const unsigned char*>(query.data()) + (a.query_begin - 1);
    const auto* t = reinterpret_cast<const unsigned char*>(target.data()) + (a.target_begin - 1);

    // The resolved runs, gathered in a thread's scratch (no allocation grows
    // one by one; a path has at most one run more than columns).
    thread_local std::vector<CigarOp> resolved;
    if (resolved.size() < static_cast<std::size_t>(columns) + 2) resolved.resize(static_cast<std::size_t>(columns) + 2);
    RunWriter writer{resolved.data()};
    AlignmentStats stats;
    stats.length = columns;
    std::int64_t sum = 0, unscored = 0;
    for (std::uint32_t c = 0; c < count; ++c) {
        const std::uint32_t code = runs[c] & 3u, length = runs[c] >> 2;
        if (length == 0) continue;
        if (code != kCigarM) {
            const bool insertion = code == kCigarI;
            const unsigned char* from = insertion ? q : t;
            char* to = insertion ? qout : tout;
            for (std::uint32_t k = 0; k < length; ++k) {
                if (index_[from[k]] == unscored_) return false;
                to[k] = letter_[from[k]];
            }
            const char op = insertion ? 'I' : 'D';
            const bool extends = writer.op == op;
            sum -= (extends ? scheme_.gap_extend : scheme_.gap_open) +
                   static_cast<std::int64_t>(length - 1) * scheme_.gap_extend;
            stats.gaps += length;
            stats.gap_opens += !extends;
            writer.add(op, length);
            if (insertion) q += length;
            else
                t += length;
        } else {
            // 64 columns at a time: score, similarities and unscored
            // residues in one sum of entries, identities and the '='/'X'
            // runs from the mask of identical columns. The tables are read
            // through locals: a store to the rows (char) would otherwise
            // reload the members at every column.
            copy_letters(qout, q, length);
            copy_letters(tout, t, length);
            const std::uint16_t* index = index_.data();
            const std::int64_t* table = columns_.data();
            const std::uint32_t stride = stride_;
            for (std::uint32_t done = 0; done < length; done += 64) {
                const std::uint32_t width = std::min(length - done, 64u);
                std::int64_t entries = 0;
                std::uint64_t same = 0;
                for (std::uint32_t k = 0; k < width; ++k) {
                    const std::uint32_t x = index[q[k]], y = index[t[k]];
                    entries += table[x * stride + y];
                    // Shifted in from the top (a shift by k costs more):
                    // column k lands on bit k once the chunk ends.
                    same = same >> 1 | static_cast<std::uint64_t>(x == y) << 63;
                }
                same >>= 64 - width;
                sum += entries >> 32;
                unscored |= entries & (kScoreUnit - kUnscored);
                stats.similarities += entries & (kUnscored - 1);
                stats.identities += std::popcount(same);
                writer.add_matches(same, width);
                q += width;
                t += width;
            }
            if (unscored) return false;
        }
        qout += length;
        tout += length;
    }
    const std::size_t n = writer.finish();
    a.cigar.assign(resolved.data() + 1, resolved.data() + n);  // its storage kept, for a reused result buffer
    a.stats = stats;
    score = sum;
    return true;
}

}  // namespace alignscope::kernels
