// The teaching stepper: its own fill of the recurrences, the fill orders, and
// the explanations a lecturer reads out.
#include "views/heatmap/dp_stepper.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>

#include <algorithm>

namespace alignscope::ui {

namespace {

constexpr std::int64_t none = DpMatrices::minus_infinity;

std::string cell(const char* state, std::int64_t i, std::int64_t j) {
    return std::string(state) + "(" + std::to_string(i) + "," + std::to_string(j) + ")";
}

// First row of anti-diagonal d (= i + j) among inner cells of an m x n pair.
std::int64_t diagonal_first_row(std::int64_t d, std::int64_t n) { return std::max<std::int64_t>(1, d - n); }
std::int64_t diagonal_length(std::int64_t d, std::int64_t m, std::int64_t n) {
    return std::min<std::int64_t>(m, d - 1) - diagonal_first_row(d, n) + 1;
}

}  // namespace

DpStepper::DpStepper(std::string query, std::string target, const ScoringScheme& scheme, const AlignOptions& options,
                     std::uint64_t cell_limit)
    : query_(std::move(query)), target_(std::move(target)), scheme_(scheme), options_(options) {
    AlignOptions with_path = options_;
    with_path.traceback = true;
    reference_ = compute_dp_matrices(query_, target_, scheme_, with_path, cell_limit);  // checks sizes and residues
    q_ = encode(query_, scheme_.matrix, "the query");
    t_ = encode(target_, scheme_.matrix, "the target");
    rows_ = static_cast<std::int64_t>(query_.size()) + 1;
    cols_ = static_cast<std::int64_t>(target_.size()) + 1;

    const std::int64_t o = scheme_.gap_open, e = scheme_.gap_extend;
    const bool local = options_.mode == AlignmentMode::Local;
    const bool semi = options_.mode == AlignmentMode::SemiGlobal;
    const bool row0_free = local || (semi && options_.free_ends.query_begin);
    const bool col0_free = local || (semi && options_.free_ends.target_begin);
    const auto size = static_cast<std::size_t>(rows_ * cols_);
    H_.assign(size, none);
    E_.assign(size, none);
    F_.assign(size, none);
    H_[0] = 0;
    // A leading gap of length k costs open + (k-1) extend; a free one costs nothing
    // and is no gap state (the residues it skips are outside the alignment).
    for (std::int64_t j = 1; j < cols_; ++j) {
        H_[at(0, j)] = row0_free ? 0 : -scheme_.gap_cost(j);
        if (!row0_free) E_[at(0, j)] = H_[at(0, j)];
    }
    for (std::int64_t i = 1; i < rows_; ++i) {
        H_[at(i, 0)] = col0_free ? 0 : -scheme_.gap_cost(i);
        if (!col0_free) F_[at(i, 0)] = H_[at(i, 0)];
    }
    for (std::int64_t i = 1; i < rows_; ++i)
        for (std::int64_t j = 1; j < cols_; ++j) {
            const std::int64_t left = std::max(H_[at(i, j - 1)] - o, E_[at(i, j - 1)] - e);
            const std::int64_t up = std::max(H_[at(i - 1, j)] - o, F_[at(i - 1, j)] - e);
            const std::int64_t diagonal =
                H_[at(i - 1, j - 1)] +
                scheme_.matrix.score(q_[static_cast<std::size_t>(i - 1)], t_[static_cast<std::size_t>(j - 1)]);
            std::int64_t h = std::max(diagonal, std::max(left, up));
            if (local && h < 0) h = 0;
            H_[at(i, j)] = h;
            E_[at(i, j)] = left;
            F_[at(i, j)] = up;
        }
    buildTrace();
}

void DpStepper::buildTrace() {
    // The engine's path gives the cells; the matrices follow from its moves.
    // A cell is left by the move towards the alignment's start (diagonal: H,
    // left: E, up: F). It is entered (from the end) in E only when the gap
    // that reached it goes on through it (E(i,j+1) = E(i,j) - extend), else
    // in H (the gap was opened there: E(i,j+1) = H(i,j) - open).
    const auto& path = reference_.path;
    const std::size_t n = path.size();
    trace_.assign(n, TraceCell{});
    auto move = [&path](std::size_t k) {  // the move from path[k - 1] to path[k]
        const auto [pi, pj] = path[k - 1];
        const auto [i, j] = path[k];
        if (i == pi + 1 && j == pj + 1) return DpState::H;
        return i == pi ? DpState::E : DpState::F;
    };
    for (std::size_t r = 0; r < n; ++r) {
        const std::size_t k = n - 1 - r;
        TraceCell& c = trace_[r];
        c.i = path[k].first;
        c.j = path[k].second;
        if (r > 0) {
            const DpState by = move(k + 1);
            c.enter = by != DpState::H && k > 0 && move(k) == by ? by : DpState::H;
        }
        c.leave = k > 0 ? move(k) : c.enter;
    }
}

std::vector<std::pair<std::int64_t, std::int64_t>> DpStepper::lastStepCells() const {
    std::vector<std::pair<std::int64_t, std::int64_t>> cells;
    if (traceback_ > 0 || filled_ == 0) return cells;
    const auto [ci, cj] = cellAt(filled_ - 1);
    if (step_ == FillStep::Cell) {
        cells.emplace_back(ci, cj);
    } else if (step_ == FillStep::Row) {
        for (std::int64_t j = 1; j < cols_; ++j)
            if (isFilled(ci, j)) cells.emplace_back(ci, j);
    } else {
        const std::int64_t d = ci + cj, m = rows_ - 1;
        for (std::int64_t i = diagonal_first_row(d, cols_ - 1); i <= std::min(m, d - 1); ++i)
            if (isFilled(i, d - i)) cells.emplace_back(i, d - i);
    }
    return cells;
}

std::vector<DpDependency> DpStepper::dependencies(DpState state, std::int64_t i, std::int64_t j) const {
    std::vector<DpDependency> terms;
    if (i < 1 || j < 1 || i >= rows_ || j >= cols_) return terms;
    const std::int64_t o = scheme_.gap_open, e = scheme_.gap_extend;
    auto add = [&](DpState from, std::int64_t a, std::int64_t b, std::int64_t change, std::string label) {
        const std::int64_t v = value(from, a, b);
        terms.push_back({from, a, b, v <= none / 2 ? none : v + change, false, std::move(label)});
    };
    const char* names[] = {"H", "E", "F"};
    auto name = [&](DpState st, std::int64_t a, std::int64_t b) { return cell(names[int(st)], a, b); };
    switch (state) {
        case DpState::H: {
            const std::size_t qi = static_cast<std::size_t>(i - 1), tj = static_cast<std::size_t>(j - 1);
            add(DpState::H, i - 1, j - 1, scheme_.matrix.score(q_[qi], t_[tj]),
                name(DpState::H, i - 1, j - 1) + " + s(" + query_[qi] + "," + target_[tj] + ")");
            if (scheme_.linear()) {
                add(DpState::H, i, j - 1, -o, name(DpState::H, i, j - 1) + " - gap");
                add(DpState::H, i - 1, j, -o, name(DpState::H, i - 1, j) + " - gap");
            } else {
                add(DpState::E, i, j, 0, name(DpState::E, i, j));
                add(DpState::F, i, j, 0, name(DpState::F, i, j));
            }
            break;
        }
        case DpState::E:
            add(DpState::H, i, j - 1, -o, name(DpState::H, i, j - 1) + " - open");
            if (!scheme_.linear()) add(DpState::E, i, j - 1, -e, name(DpState::E, i, j - 1) + " - extend");
            break;
        case DpState::F:
            add(DpState::H, i - 1, j, -o, name(DpState::H, i - 1, j) + " - open");
            if (!scheme_.linear()) add(DpState::F, i - 1, j, -e, name(DpState::F, i - 1, j) + " - extend");
            break;
    }
    const std::int64_t result = value(state, i, j);
    for (DpDependency& d : terms) d.used = d.term == result && result > none / 2;
    return terms;
}

std::string DpStepper::format(std::int64_t scaled) const {
    if (scaled <= none / 2) return "-∞";
    return format_score(scheme_.to_user(scaled));
}

void DpStepper::setStep(FillStep step) { step_ = step; }

std::pair<std::int64_t, std::int64_t> DpStepper::cellAt(std::int64_t k) const {
    const std::int64_t m = rows_ - 1, n = cols_ - 1;
    if (step_ != FillStep::AntiDiagonal) return {1 + k / n, 1 + k % n};
    for (std::int64_t d = 2; d <= m + n; ++d) {
        const std::int64_t len = diagonal_length(d, m, n);
        if (k < len) {
            const std::int64_t i = diagonal_first_row(d, n) + k;
            return {i, d - i};
        }
        k -= len;
    }
    return {m, n};
}

std::int64_t DpStepper::rankOf(std::int64_t i, std::int64_t j) const {
    const std::int64_t m = rows_ - 1, n = cols_ - 1;
    if (step_ != FillStep::AntiDiagonal) return (i - 1) * n + (j - 1);
    std::int64_t rank = 0;
    for (std::int64_t d = 2; d < i + j; ++d) rank += diagonal_length(d, m, n);
    return rank + (i - diagonal_first_row(i + j, n));
}

bool DpStepper::isFilled(std::int64_t i, std::int64_t j) const {
    if (i == 0 || j == 0) return true;
    return rankOf(i, j) < filled_;
}

bool DpStepper::advance(int direction) {
    const std::int64_t total = innerCells();
    if (direction > 0) {
        if (filled_ == total) {
            if (traceback_ >= tracebackSteps()) return false;
            ++traceback_;
            return true;
        }
        if (step_ == FillStep::Cell) {
            ++filled_;
        } else if (step_ == FillStep::Row) {
            const std::int64_t n = cols_ - 1;
            filled_ = std::min(total, (filled_ / n + 1) * n);
        } else {
            // To the end of the anti-diagonal holding the next cell.
            const auto [i, j] = cellAt(filled_);
            const std::int64_t d = i + j;
            filled_ = rankOf(std::min(rows_ - 1, d - 1), d - std::min(rows_ - 1, d - 1)) + 1;
        }
        return true;
    }
    if (traceback_ > 0) {
        --traceback_;
        return true;
    }
    if (filled_ == 0) return false;
    if (step_ == FillStep::Cell) {
        --filled_;
    } else if (step_ == FillStep::Row) {
        const std::int64_t n = cols_ - 1;
        filled_ = ((filled_ - 1) / n) * n;
    } else {
        // Back to the start of the anti-diagonal holding the last filled cell.
        const auto [i, j] = cellAt(filled_ - 1);
        const std::int64_t d = i + j;
        const std::int64_t first = diagonal_first_row(d, cols_ - 1);
        filled_ = rankOf(first, d - first);
    }
    return true;
}

void DpStepper::toStart() {
    filled_ = 0;
    traceback_ = 0;
}

void DpStepper::toFillEnd() {
    filled_ = innerCells();
    traceback_ = 0;
}

void DpStepper::toEnd() {
    filled_ = innerCells();
    traceback_ = tracebackSteps();
}

std::optional<std::pair<std::int64_t, std::int64_t>> DpStepper::current() const {
    if (traceback_ > 0) return reference_.path[reference_.path.size() - static_cast<std::size_t>(traceback_)];
    if (filled_ == 0) return std::nullopt;
    return cellAt(filled_ - 1);
}

std::int64_t DpStepper::value(DpState state, std::int64_t i, std::int64_t j) const {
    const auto k = at(i, j);
    return state == DpState::H ? H_[k] : state == DpState::E ? E_[k] : F_[k];
}

CellOrigin DpStepper::origin(std::int64_t i, std::int64_t j) const {
    CellOrigin o;
    if (i == 0 || j == 0) {
        o.boundary = true;
        return o;
    }
    const std::int64_t h = H_[at(i, j)];
    const std::int64_t diagonal = H_[at(i - 1, j - 1)] + scheme_.matrix.score(q_[static_cast<std::size_t>(i - 1)],
                                                                              t_[static_cast<std::size_t>(j - 1)]);
    o.diagonal = h == diagonal;
    o.left = h == E_[at(i, j)];
    o.up = h == F_[at(i, j)];
    o.zero = options_.mode == AlignmentMode::Local && h == 0;
    return o;
}

std::string DpStepper::explain(std::int64_t i, std::int64_t j) const {
    const std::string o = format(scheme_.gap_open), e = format(scheme_.gap_extend);
    if (i == 0 && j == 0) return "H(0,0) = 0: the empty prefixes";
    if (i == 0 || j == 0) {
        const std::int64_t k = i + j;
        const std::string h = cell("H", i, j);
        if (H_[at(i, j)] == 0)
            return h + " = 0: a free end gap (" +
                   std::string(options_.mode == AlignmentMode::Local ? "local mode" : "semi-global mode") + ")";
        return h + " = -(open + (k-1)·extend) = -(" + o + " + " + std::to_string(k - 1) + "·" + e +
               ") = " + format(H_[at(i, j)]) + ": a leading gap of " + std::to_string(k) +
               (i == 0 ? " target" : " query") + " residue" + (k == 1 ? "" : "s");
    }
    const char qi = query_[static_cast<std::size_t>(i - 1)], tj = target_[static_cast<std::size_t>(j - 1)];
    const std::int64_t s =
        scheme_.matrix.score(q_[static_cast<std::size_t>(i - 1)], t_[static_cast<std::size_t>(j - 1)]);
    const std::int64_t diag_h = H_[at(i - 1, j - 1)];
    const bool local = options_.mode == AlignmentMode::Local;
    const std::string zero = local ? ", 0" : "";
    std::string text;
    std::string diag = format(diag_h) + " + " + format(s);
    if (scheme_.linear()) {
        const std::int64_t left_h = H_[at(i, j - 1)], up_h = H_[at(i - 1, j)];
        text = cell("H", i, j) + " = max(" + cell("H", i - 1, j - 1) + " + s(" + qi + "," + tj + "), " +
               cell("H", i, j - 1) + " - gap, " + cell("H", i - 1, j) + " - gap" + zero + ")\n";
        text +=
            "       = max(" + diag + ", " + format(left_h) + " - " + o + ", " + format(up_h) + " - " + o + zero + ")\n";
        text += "       = max(" + format(diag_h + s) + ", " + format(E_[at(i, j)]) + ", " + format(F_[at(i, j)]) +
                zero + ") = " + format(H_[at(i, j)]);
    } else {
        text = cell("E", i, j) + " = max(" + cell("H", i, j - 1) + " - open, " + cell("E", i, j - 1) +
               " - extend) = max(" + format(H_[at(i, j - 1)]) + " - " + o + ", " + format(E_[at(i, j - 1)]) + " - " +
               e + ") = " + format(E_[at(i, j)]) + "\n";
        text += cell("F", i, j) + " = max(" + cell("H", i - 1, j) + " - open, " + cell("F", i - 1, j) +
                " - extend) = max(" + format(H_[at(i - 1, j)]) + " - " + o + ", " + format(F_[at(i - 1, j)]) + " - " +
                e + ") = " + format(F_[at(i, j)]) + "\n";
        text += cell("H", i, j) + " = max(" + cell("H", i - 1, j - 1) + " + s(" + qi + "," + tj + "), " +
                cell("E", i, j) + ", " + cell("F", i, j) + zero + ") = max(" + diag + ", " + format(E_[at(i, j)]) +
                ", " + format(F_[at(i, j)]) + zero + ") = " + format(H_[at(i, j)]);
    }
    const CellOrigin from = origin(i, j);
    std::vector<std::string> sources;
    if (from.diagonal)
        sources.push_back(std::string("the diagonal (") + qi + (qi == tj ? " matches " : " against ") + tj + ")");
    if (from.left) sources.push_back("the left (a gap in the query)");
    if (from.up) sources.push_back("above (a gap in the target)");
    if (from.zero && !from.diagonal && !from.left && !from.up) sources.push_back("a fresh start at 0 (local)");
    text += "\n   from ";
    for (std::size_t k = 0; k < sources.size(); ++k)
        text += (k ? (k + 1 == sources.size() ? " and " : ", ") : "") + sources[k];
    return text;
}

std::vector<std::pair<std::int64_t, std::int64_t>> DpStepper::tracedCells() const {
    std::vector<std::pair<std::int64_t, std::int64_t>> cells;
    const auto& path = reference_.path;
    for (std::int64_t k = 0; k < traceback_; ++k) cells.push_back(path[path.size() - 1 - static_cast<std::size_t>(k)]);
    return cells;
}

std::string DpStepper::explainTraceback() const {
    if (traceback_ == 0) return {};
    const auto& path = reference_.path;
    const std::size_t n = path.size();
    const auto [i, j] = path[n - static_cast<std::size_t>(traceback_)];
    std::string text;
    if (traceback_ == 1) {
        text = "The traceback starts at (" + std::to_string(i) + "," + std::to_string(j) + "), score " +
               format(reference_.alignment.score) + ": ";
        switch (options_.mode) {
            case AlignmentMode::Global: text += "the corner cell, both sequences used up"; break;
            case AlignmentMode::Local: text += "the highest cell of the whole matrix"; break;
            case AlignmentMode::SemiGlobal: text += "the best cell where the end gaps are free"; break;
        }
    } else {
        const auto [pi, pj] = path[n - static_cast<std::size_t>(traceback_) + 1];
        const std::string from = "(" + std::to_string(pi) + "," + std::to_string(pj) + ")";
        const std::string to = "(" + std::to_string(i) + "," + std::to_string(j) + ")";
        if (pi == i + 1 && pj == j + 1) {
            const char qa = query_[static_cast<std::size_t>(pi - 1)], tb = target_[static_cast<std::size_t>(pj - 1)];
            const std::int64_t s =
                scheme_.matrix.score(q_[static_cast<std::size_t>(pi - 1)], t_[static_cast<std::size_t>(pj - 1)]);
            text = from + " <- " + to + " diagonally: " + qa + " aligned with " + tb + ", " + cell("H", pi, pj) +
                   " = " + cell("H", i, j) + " + s(" + qa + "," + tb + ") = " + format(H_[at(i, j)]) + " + " +
                   format(s) + " = " + format(H_[at(i, j)] + s);
        } else if (pi == i && pj == j + 1) {
            text = from + " <- " + to + " from the left: target " + target_[static_cast<std::size_t>(pj - 1)] +
                   " against a gap in the query";
        } else {
            text = from + " <- " + to + " from above: query " + query_[static_cast<std::size_t>(pi - 1)] +
                   " against a gap in the target";
        }
    }
    // Which matrix the path is in, and where it switches.
    const char* names[] = {"H", "E", "F"};
    const TraceCell& here = trace_[static_cast<std::size_t>(traceback_ - 1)];
    bool said = false;  // which matrix, by the gap's own line
    if (traceback_ > 1) {
        const TraceCell& before = trace_[static_cast<std::size_t>(traceback_ - 2)];
        if (before.leave != DpState::H) {
            const bool opens = here.enter == DpState::H;
            const std::int64_t penalty = opens ? scheme_.gap_open : scheme_.gap_extend;
            text += "\n   " + cell(names[int(before.leave)], before.i, before.j) + " = " +
                    cell(names[int(here.enter)], i, j) + (opens ? " - open" : " - extend") + " = " +
                    format(value(here.enter, i, j)) + " - " + format(penalty) + " = " +
                    format(value(before.leave, before.i, before.j)) +
                    (opens ? ": the gap opens here, back in H"
                           : ": the gap goes on, still in " + std::string(names[int(here.enter)]));
            said = true;
        }
    }
    if (here.switches() && traceback_ < tracebackSteps())
        text += "\n   switch from " + std::string(names[int(here.enter)]) + " to " + names[int(here.leave)] + " at (" +
                std::to_string(i) + "," + std::to_string(j) + "): " + cell(names[int(here.enter)], i, j) + " = " +
                cell(names[int(here.leave)], i, j) + " = " + format(value(here.leave, i, j)) +
                (here.leave == DpState::E ? ", a gap in the query ends here" : ", a gap in the target ends here");
    else if (!said)
        text += std::string("\n   in ") + names[int(here.enter)];
    if (traceback_ == tracebackSteps()) {
        text += "\nThe traceback ends at (" + std::to_string(i) + "," + std::to_string(j) + ")";
        if (options_.mode == AlignmentMode::Local) text += ", where the alignment began from 0";
        else if (i == 0 && j == 0)
            text += ", the origin";
        else
            text += ", on a free boundary";
    }
    return text;
}

}  // namespace alignscope::ui
