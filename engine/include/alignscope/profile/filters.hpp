// The scalar reference of hmmsearch's filters and its Forward/Backward: the MSV
// filter in 8-bit biased units, the Viterbi filter in 16-bit units (HMMER's
// saturations, offsets and its "-3 nats for the N/C/J loops" approximation), and
// Forward/Backward in probability space with sparse rescaling. Every recurrence
// is written cell by cell so that a vectorised or GPU version can be checked
// against it score for score. Scores are raw log-likelihoods in nats; subtract
// the null score and divide by log 2 for bits.
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace alignscope::profile {

// MSV (multiple ungapped segments) score; +infinity when the byte range
// overflows (a certain pass, as in HMMER).
float msv_filter(const MsvProfile& om, const std::uint8_t* dsq, int L);

// Viterbi filter score; +infinity on word overflow, -infinity when no path.
float viterbi_filter(const ViterbiFilterProfile& om, const std::uint8_t* dsq, int L);

// The scores (nats) from the recurrences' last special state, for a target of
// length L: MSV's xJ byte and the Viterbi filter's xC word. Every filter
// implementation (scalar, SIMD, GPU) ends in these, so the floating-point
// step is the same everywhere.
float msv_score_of(const MsvProfile& om, int xJ, int L);
float viterbi_score_of(const ViterbiFilterProfile& om, int xC, int L);

// A Forward or Backward matrix in probability space. Rows i = 0..L (when
// `full`; otherwise two rows, i & 1) of M, I and D in HMMER's striped layout:
// Q segments of four lanes, node k (1..M) at segment (k-1) % Q, lane (k-1) / Q,
// lanes past node M held at 0 as the recurrences leave them. Every row keeps
// the special states E, N, J, B, C with the row's scale factor. A full matrix
// may keep D in two rows only (`all_deletes` false: the recurrences read D
// of the row before, posterior decoding reads none). resize() only grows the
// storage and does not clear it: the recurrences write every cell.
struct DpMatrix {
    enum Special { E = 0, N, J, B, C, Scale, Specials };
    int M = 0, L = 0, Q = 0;
    bool full = false, all_deletes = true;
    std::vector<float> mmx, imx, dmx, xmx;
    float total_scale = 0;  // sum of log(scale) over rows, nats
    // Backward only: from some row down, scale factors of its own rather than
    // the Forward's (HMMER switches when B passes 1e16, where the Forward's
    // factors would let the Backward overflow); posterior decoding then
    // corrects row by row.
    bool own_scales = false;

    void resize(int model_length, int target_length, bool keep_all_rows, bool keep_all_deletes = true);
    std::size_t width() const { return static_cast<std::size_t>(Q) * 4; }
    // Row i of M and I (and of D where every row's D is kept), and of D.
    std::size_t row(int i) const { return static_cast<std::size_t>(full ? i : (i & 1)) * width(); }
    std::size_t drow(int i) const { return static_cast<std::size_t>(full && all_deletes ? i : (i & 1)) * width(); }
    // Node k = 1..M of row i.
    std::size_t cell(int i, int k) const { return row(i) + static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q); }
    float& x(int i, Special s) { return xmx[static_cast<std::size_t>(i * Specials + s)]; }
    float x(int i, Special s) const { return xmx[static_cast<std::size_t>(i * Specials + s)]; }
};

// Where a Backward switches to its own scale factors (DpMatrix::own_scales):
// B above 1e16, compared in double as HMMER compares it.
inline bool backward_needs_own_scales(float xB) { return static_cast<double>(xB) > 1.0e16; }

// HMMER's number of four-float segments for a model of M nodes.
inline int striped_segments(int M) {
    const int q = (M - 1) / 4 + 1;
    return q < 2 ? 2 : q;
}

// hmmsearch runs its floating-point stages with subnormal results flushed to
// zero and subnormal inputs read as zero (SSE's FTZ and DAZ); products that
// fall below FLT_MIN agree with its own only in that mode, and subnormal
// arithmetic costs many times more. Sets both on this thread for the object's
// lifetime and restores the previous mode (a no-op without SSE).
class FlushSubnormals {
public:
    FlushSubnormals();
    ~FlushSubnormals();
    FlushSubnormals(const FlushSubnormals&) = delete;
    FlushSubnormals& operator=(const FlushSubnormals&) = delete;

private:
    unsigned saved_ = 0;
};

// Forward over dsq[0..L-1] (residue i of the recurrences is dsq[i-1]); returns
// the log-likelihood in nats. A full matrix keeps every row's D unless
// `all_deletes` is false.
float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full, bool all_deletes = true);

// Backward with the Forward pass's scale factors (so that posteriors come out
// as products); returns the log-likelihood in nats.
float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, const DpMatrix& fwd,
               DpMatrix& bck, bool full, bool all_deletes = true);

}  // namespace alignscope::profile
