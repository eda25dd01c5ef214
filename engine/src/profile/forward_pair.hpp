// Forward and Backward in pieces (start, rows from a given one, the specials
// of a row), so that up to eight targets can share the work of their common
// rows in the halves of 256-bit registers and each finish alone. A row's
// recurrence is latency-bound (the D->D chains run one segment after
// another); independent targets in one instruction stream fill the
// pipeline, while every float operation of each target stays the one the
// four-lane code does, so scores are bit for bit the same.
#pragma once

#include <alignscope/profile/filters.hpp>

#include <cstdint>

namespace alignscope::profile {

// Forward's specials carried from row to row (the running log of the scale
// factors is the matrix's total_scale).
struct ForwardCarry {
    float xN = 1, xJ = 0, xB = 0, xC = 0;
};
// Backward's specials, carried from row to row.
struct BackwardCarry {
    float xE = 0, xN = 0, xJ = 0, xB = 0, xC = 0;
};

// Row 0 of Forward, then rows `from`..L (row from-1 in the matrix's rows);
// forward_from returns the score.
void forward_start(const ForwardProfile& om, const LengthModel& length, int L, DpMatrix& fwd, ForwardCarry& c,
                   bool full, bool all_deletes = true);
float forward_from(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
                   ForwardCarry c, int from);
// Row i's specials from the row's E; returns the factor the row's cells are
// multiplied by (1 when the row is not rescaled).
float forward_specials(const ForwardProfile& om, const LengthModel& length, float xE, ForwardCarry& c, DpMatrix& fwd,
                       int i);

// Backward: sizes the matrix and sets the row-L specials; row L's cells;
// then rows `from`..1 (row from+1 in the matrix's rows) and row 0, returning
// the score.
void backward_start(const ForwardProfile& om, const LengthModel& length, int L, DpMatrix& bck, BackwardCarry& x,
                    bool full, bool all_deletes = true);
void backward_last_row(const ForwardProfile& om, const DpMatrix& fwd, DpMatrix& bck, BackwardCarry& x);
float backward_from(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
                    const DpMatrix& fwd, DpMatrix& bck, BackwardCarry x, int from);
// Row i's specials (i < L) from the row's B sum, then the division by the
// Forward's scale factor of row i; backward_scale returns the cells' factor.
void backward_specials(float xB, const LengthModel& length, const ForwardProfile& om, BackwardCarry& x);
float backward_scale(const DpMatrix& fwd, int i, DpMatrix& bck, BackwardCarry& x);

// One target of a group: residues, length model and its matrices (parser
// or full; Backward reads the Forward matrix's scale factors).
struct PairTarget {
    const std::uint8_t* dsq;
    int L;
    LengthModel length;
    DpMatrix* fwd;
    DpMatrix* bck;
};

// The most targets one group runs at once.
constexpr int kGroupTargets = 8;

// Whether this CPU runs the grouped code (AVX); without it the group
// functions run each target alone.
bool paired_rows_available();
// Forward (Backward) of one to eight targets into their matrices (full or
// parser); scores[j] is target j's. The same scores and matrices as
// forward()/backward() of each, except that rows of a full matrix done in a
// group may keep no D values (posterior decoding reads M and I only).
// With all_deletes false, full matrices keep D in two rows (DpMatrix).
void forward_group(const ForwardProfile& om, const PairTarget* targets, int n, bool full, float* scores,
                   bool all_deletes = true);
void backward_group(const ForwardProfile& om, const PairTarget* targets, int n, bool full, float* scores,
                    bool all_deletes = true);

}  // namespace alignscope::profile
