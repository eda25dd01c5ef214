// Heatmaps of large DP matrices: the recurrences of dp_matrix.cpp filled one
// row at a time (H, E, F of the current row only), each row max-pooled into
// its grid row as soon as it is done.
#include <alignscope/align/dp_heatmap.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"

#include <algorithm>
#include <string>

namespace alignscope {

namespace {

constexpr std::int64_t none = DpMatrices::minus_infinity;

// H, E and F of one DP row, columns [0, width), advanced row by row.
class RowFill {
public:
    RowFill(const EncodedSequence& query, const EncodedSequence& target, const ScoringScheme& scheme,
            const AlignOptions& options, std::int64_t width)
        : q_(query), t_(target), scheme_(scheme), width_(width) {
        local_ = options.mode == AlignmentMode::Local;
        const bool semi = options.mode == AlignmentMode::SemiGlobal;
        // Free boundaries score 0 and are not gap states (as in compute_dp_matrices).
        row0_free_ = local_ || (semi && options.free_ends.query_begin);
        col0_free_ = local_ || (semi && options.free_ends.target_begin);
        const auto w = static_cast<std::size_t>(width);
        H.assign(w, none);
        E.assign(w, none);
        F.assign(w, none);
    }

    void start_at_row_zero() {
        row = 0;
        const std::int64_t o = scheme_.gap_open, e = scheme_.gap_extend;
        H[0] = 0;
        E[0] = none;
        F[0] = none;
        for (std::int64_t j = 1; j < width_; ++j) {
            const std::int64_t boundary = row0_free_ ? 0 : -(o + (j - 1) * e);
            H[idx(j)] = boundary;
            E[idx(j)] = row0_free_ ? none : boundary;
            F[idx(j)] = none;
        }
    }

    void start_at(const DpRowCheckpoint& saved) {
        if (saved.row == 0) {
            start_at_row_zero();
            return;
        }
        row = saved.row;
        std::copy_n(saved.H.begin(), width_, H.begin());
        std::copy_n(saved.F.begin(), width_, F.begin());
        // E of a row depends on that row's H only, so it is rebuilt rather than saved.
        const std::int64_t o = scheme_.gap_open, e = scheme_.gap_extend;
        E[0] = none;
        for (std::int64_t j = 1; j < width_; ++j) E[idx(j)] = std::max(H[idx(j - 1)] - o, E[idx(j - 1)] - e);
    }

    void next_row() {
        ++row;
        const std::int64_t o = scheme_.gap_open, e = scheme_.gap_extend;
        const std::int64_t boundary = col0_free_ ? 0 : -(o + (row - 1) * e);
        std::int64_t diagonal = H[0];  // H(row-1, j-1) as j advances
        H[0] = boundary;
        E[0] = none;
        F[0] = col0_free_ ? none : boundary;
        const std::uint8_t qi = q_[static_cast<std::size_t>(row - 1)];
        std::int64_t left_h = H[0], left_e = none;
        for (std::int64_t j = 1; j < width_; ++j) {
            const auto k = idx(j);
            const std::int64_t up_h = H[k];
            const std::int64_t e_cell = std::max(left_h - o, left_e - e);
            const std::int64_t f_cell = std::max(up_h - o, F[k] - e);
            std::int64_t h = std::max({diagonal + scheme_.matrix.score(qi, t_[k - 1]), e_cell, f_cell});
            if (local_) h = std::max<std::int64_t>(h, 0);
            diagonal = up_h;
            H[k] = h;
            E[k] = e_cell;
            F[k] = f_cell;
            left_h = h;
            left_e = e_cell;
        }
    }

    const std::vector<std::int64_t>& state(DpState s) const { return s == DpState::H ? H : s == DpState::E ? E : F; }

    std::int64_t row = 0;
    std::vector<std::int64_t> H, E, F;

private:
    static std::size_t idx(std::int64_t j) { return static_cast<std::size_t>(j); }
    const EncodedSequence& q_;
    const EncodedSequence& t_;
    const ScoringScheme& scheme_;
    std::int64_t width_;
    bool local_ = false, row0_free_ = false, col0_free_ = false;
};

std::string region_text(const DpRegion& r) {
    return "rows " + std::to_string(r.row_begin) + ".." + std::to_string(r.row_end) + ", columns " +
           std::to_string(r.col_begin) + ".." + std::to_string(r.col_end);
}

void check_pair(std::string_view query, std::string_view target) {
    if (query.empty() || target.empty())
        throw Error(std::string("DP heatmap: the ") + (query.empty() ? "query" : "target") + " is empty");
}

}  // namespace

DpHeatmap compute_dp_heatmap(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                             const AlignOptions& options, const DpHeatmapRequest& request) {
    detail::check_scheme(scheme);
    check_pair(query, target);
    const auto m = static_cast<std::int64_t>(query.size());
    const auto n = static_cast<std::int64_t>(target.size());
    DpRegion region = request.region;
    if (region.rows() == 0 && region.cols() == 0 && region.row_begin == 0 && region.col_begin == 0)
        region = DpRegion::whole(m, n);
    if (region.row_begin < 0 || region.col_begin < 0 || region.row_end > m + 1 || region.col_end > n + 1 ||
        region.rows() < 1 || region.cols() < 1)
        throw Error("DP heatmap: the region (" + region_text(region) + ") is not inside the " + std::to_string(m + 1) +
                    " x " + std::to_string(n + 1) + " matrix");
    if (request.grid_rows < 1 || request.grid_cols < 1)
        throw Error("DP heatmap: the grid must be at least 1 x 1, not " + std::to_string(request.grid_rows) + " x " +
                    std::to_string(request.grid_cols));
    if (request.start) {
        const DpRowCheckpoint& s = *request.start;
        if (s.row < 0 || s.row > region.row_begin)
            throw Error("DP heatmap: the saved row " + std::to_string(s.row) + " lies below the region (" +
                        region_text(region) + ")");
        if (static_cast<std::int64_t>(s.H.size()) < region.col_end ||
            static_cast<std::int64_t>(s.F.size()) < region.col_end)
            throw Error("DP heatmap: the saved row " + std::to_string(s.row) + " holds " + std::to_string(s.H.size()) +
                        " columns; the region needs " + std::to_string(region.col_end));
    }
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");

    DpHeatmap map;
    map.region = region;
    map.state = request.state;
    map.rows = static_cast<int>(std::min<std::int64_t>(request.grid_rows, region.rows()));
    map.cols = static_cast<int>(std::min<std::int64_t>(request.grid_cols, region.cols()));
    map.values.assign(static_cast<std::size_t>(map.rows) * map.cols, none);

    // First region column of each block: block(x) = x * cols / W, so block c
    // starts at ceil(c * W / cols).
    const std::int64_t width = region.cols();
    std::vector<std::int64_t> block_start(static_cast<std::size_t>(map.cols) + 1);
    for (int c = 0; c <= map.cols; ++c)
        block_start[static_cast<std::size_t>(c)] = region.col_begin + (c * width + map.cols - 1) / map.cols;

    RowFill fill(q, t, scheme, options, region.col_end);
    if (request.start) fill.start_at(*request.start);
    else
        fill.start_at_row_zero();
    const std::int64_t first_row = fill.row;
    const std::uint64_t total =
        static_cast<std::uint64_t>(region.row_end - 1 - first_row) * static_cast<std::uint64_t>(region.col_end - 1);
    std::uint64_t since_check = 0;
    for (;;) {
        if (fill.row >= region.row_begin) {
            const std::vector<std::int64_t>& values = fill.state(request.state);
            std::int64_t* out = map.values.data() + static_cast<std::size_t>(map.row_block(fill.row)) * map.cols;
            for (int c = 0; c < map.cols; ++c) {
                const auto from = values.begin() + block_start[static_cast<std::size_t>(c)];
                const auto to = values.begin() + block_start[static_cast<std::size_t>(c) + 1];
                const std::int64_t best = *std::max_element(from, to);
                if (best > out[c]) out[c] = best;
            }
        }
        if (fill.row + 1 >= region.row_end) break;
        fill.next_row();
        map.cells_computed += static_cast<std::uint64_t>(region.col_end - 1);
        since_check += static_cast<std::uint64_t>(region.col_end - 1);
        if (since_check >= (1u << 18)) {
            since_check = 0;
            if (request.cancel) request.cancel->throw_if_cancelled();
            if (request.progress) request.progress(map.cells_computed, total);
        }
    }
    // Unreachable cells stay at minus infinity however the pooling met them.
    for (std::int64_t& v : map.values)
        if (v <= none / 2) v = none;
    if (request.progress) request.progress(map.cells_computed, total);
    return map;
}

std::vector<DpRowCheckpoint> save_dp_rows(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                                          const AlignOptions& options, std::vector<std::int64_t> rows,
                                          const CancellationToken* cancel) {
    detail::check_scheme(scheme);
    check_pair(query, target);
    const auto m = static_cast<std::int64_t>(query.size());
    const auto n = static_cast<std::int64_t>(target.size());
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (const std::int64_t r : rows)
        if (r < 0 || r > m)
            throw Error("save_dp_rows: row " + std::to_string(r) + " is outside 0.." + std::to_string(m));
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");
    std::vector<DpRowCheckpoint> saved;
    if (rows.empty()) return saved;
    RowFill fill(q, t, scheme, options, n + 1);
    fill.start_at_row_zero();
    std::size_t next = 0;
    for (;;) {
        if (fill.row == rows[next]) {
            saved.push_back({fill.row, fill.H, fill.F});
            if (++next == rows.size()) break;
        }
        fill.next_row();
        if (cancel && (fill.row & 63) == 0) cancel->throw_if_cancelled();
    }
    return saved;
}

}  // namespace alignscope
