// Linear-space global alignment with affine gaps (Myers and Miller 1988, after
// Hirschberg): split the query rows in half, find where the optimal path crosses
// the middle from one forward and one reverse score pass, and recurse on the two
// halves. Memory is O(m + n); time about twice the full-matrix fill.
#include <alignscope/align/linear_space.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"

#include <algorithm>
#include <vector>

namespace alignscope {
namespace detail {

namespace {

class MyersMiller {
public:
    MyersMiller(const std::uint8_t* query, std::int64_t rows, const std::uint8_t* target, std::int64_t cols,
                const ScoringScheme& scheme, Cigar& cigar, CellCounter& counter)
        : query_(query),
          target_(target),
          rows_(rows),
          cols_(cols),
          scheme_(scheme),
          cigar_(cigar),
          counter_(counter),
          query_rev_(std::make_reverse_iterator(query + rows), std::make_reverse_iterator(query)),
          target_rev_(std::make_reverse_iterator(target + cols), std::make_reverse_iterator(target)) {
        const auto width = static_cast<std::size_t>(cols) + 1;
        forward_h_.resize(width);
        forward_f_.resize(width);
        reverse_h_.resize(width);
        reverse_f_.resize(width);
    }

    void run() { solve(0, rows_, 0, cols_, scheme_.gap_open, scheme_.gap_open); }

private:
    // Aligns query rows (i0, i1] with target columns (j0, j1]. A run of 'I' down
    // column j0 from the top-left corner costs top_open for its first column, a
    // run down column j1 into the bottom-right corner bottom_open: gap_open
    // normally, gap_extend when the run continues a gap opened outside.
    void solve(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, std::int64_t top_open,
               std::int64_t bottom_open) {
        const std::int64_t m = i1 - i0;
        const std::int64_t n = j1 - j0;
        // Recursing down to single rows costs no more time than stopping at a
        // few thousand cells (measured), and keeps even tiny inputs on the
        // Myers-Miller path, where the exhaustive tests can reach it.
        if (m < 2 || n == 0) {
            global_traceback(query_ + i0, m, target_ + j0, n, scheme_, top_open, bottom_open, cigar_, counter_);
            return;
        }
        const std::int64_t o = scheme_.gap_open;
        const std::int64_t e = scheme_.gap_extend;
        const std::int64_t mid = i0 + m / 2;  // i0 < mid < i1

        // CC/DD: best score of a path from (i0, j0) to (mid, j) ending anywhere /
        // with an 'I'. RR/SS: from (mid, j) to (i1, j1) starting anywhere / with an
        // 'I'; the reverse pass runs on the reversed strings, index n - (j - j0).
        last_row(query_ + i0, mid - i0, target_ + j0, n, top_open, forward_h_.data(), forward_f_.data());
        last_row(query_rev_.data() + (rows_ - i1), i1 - mid, target_rev_.data() + (cols_ - j1), n, bottom_open,
                 reverse_h_.data(), reverse_f_.data());

        // Type 1: the path passes (mid, j). Type 2: an 'I' run goes through
        // (mid, j), rows mid and mid+1 in one gap that both passes charged an open
        // for; joining them refunds open - extend.
        std::int64_t best = minus_infinity;
        std::int64_t best_j = 0;
        bool through_gap = false;
        for (std::int64_t j = 0; j <= n; ++j) {
            const auto fwd = static_cast<std::size_t>(j);
            const auto rev = static_cast<std::size_t>(n - j);
            const std::int64_t plain = forward_h_[fwd] + reverse_h_[rev];
            const std::int64_t joined = forward_f_[fwd] + reverse_f_[rev] + (o - e);
            if (plain > best) {
                best = plain;
                best_j = j;
                through_gap = false;
            }
            if (joined > best) {
                best = joined;
                best_j = j;
                through_gap = true;
            }
        }

        const std::int64_t j_mid = j0 + best_j;
        if (!through_gap) {
            solve(i0, mid, j0, j_mid, top_open, o);
            solve(mid, i1, j_mid, j1, o, bottom_open);
        } else {
            // Rows mid and mid+1 are the two 'I' columns that cross the middle; the
            // halves may continue that gap at the cost of extensions only.
            solve(i0, mid - 1, j0, j_mid, top_open, e);
            cigar_.push('I', 2);
            solve(mid + 1, i1, j_mid, j1, e, bottom_open);
        }
    }

    // Global score pass over a[0..rows) x b[0..cols): the last row's H and F
    // (F: ending with an 'I'), with an 'I' run down column 0 opening at top_open.
    void last_row(const std::uint8_t* a, std::int64_t rows, const std::uint8_t* b, std::int64_t cols,
                  std::int64_t top_open, std::int64_t* h_row, std::int64_t* f_row) {
        const std::int64_t o = scheme_.gap_open;
        const std::int64_t e = scheme_.gap_extend;
        const int* scores = scheme_.matrix.scores().data();
        const int size = scheme_.matrix.size();
        h_row[0] = 0;
        f_row[0] = minus_infinity;
        for (std::int64_t j = 1; j <= cols; ++j) {
            h_row[j] = -(o + (j - 1) * e);
            f_row[j] = minus_infinity;
        }
        for (std::int64_t i = 1; i <= rows; ++i) {
            const int* sub = scores + static_cast<std::ptrdiff_t>(a[i - 1]) * size;
            std::int64_t diag = h_row[0];
            h_row[0] = -(top_open + (i - 1) * e);
            f_row[0] = h_row[0];  // column 0 below the corner is one 'I' run
            std::int64_t e_run = minus_infinity;
            std::int64_t open_e = h_row[0] - o;
            for (std::int64_t j = 1; j <= cols; ++j) {
                // E opens from the diagonal/F part of the previous cell only, as
                // in the reference passes (reference_aligner.cpp says why).
                const std::int64_t f = std::max(h_row[j] - o, f_row[j] - e);
                const std::int64_t rest = std::max(diag + sub[b[j - 1]], f);
                e_run = std::max(open_e, e_run - e);
                const std::int64_t h = std::max(rest, e_run);
                open_e = rest - o;
                diag = h_row[j];
                h_row[j] = h;
                f_row[j] = f;
            }
            counter_.add(static_cast<std::uint64_t>(cols));
        }
    }

    const std::uint8_t* query_;
    const std::uint8_t* target_;
    std::int64_t rows_;
    std::int64_t cols_;
    const ScoringScheme& scheme_;
    Cigar& cigar_;
    CellCounter& counter_;
    std::vector<std::uint8_t> query_rev_;
    std::vector<std::uint8_t> target_rev_;
    std::vector<std::int64_t> forward_h_, forward_f_, reverse_h_, reverse_f_;
};

}  // namespace

void myers_miller(const std::uint8_t* query, std::int64_t rows, const std::uint8_t* target, std::int64_t cols,
                  const ScoringScheme& scheme, Cigar& cigar, CellCounter& counter) {
    MyersMiller(query, rows, target, cols, scheme, cigar, counter).run();
}

}  // namespace detail

Alignment align_linear_space(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                             const AlignOptions& options, const std::function<void(std::uint64_t cells)>& progress) {
    detail::CellCounter counter(&progress);
    // A limit of zero cells sends every traceback through Myers-Miller.
    return detail::align_pair(query, target, scheme, options, 0, counter);
}

}  // namespace alignscope
