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

// A Forward or Backward matrix in probability space. Rows i = 0..L; each row
// keeps M, I, D for k = 0..M (when `full`; otherwise only two rows are kept) and
// the special states E, N, J, B, C with the row's scale factor.
struct DpMatrix {
    enum Special { E = 0, N, J, B, C, Scale, Specials };
    int M = 0, L = 0;
    bool full = false;
    std::vector<float> mmx, imx, dmx, xmx;
    float total_scale = 0;  // sum of log(scale) over rows, nats

    void resize(int model_length, int target_length, bool keep_all_rows);
    std::size_t cell(int i, int k) const { return static_cast<std::size_t>((full ? i : (i & 1)) * (M + 1) + k); }
    float& x(int i, Special s) { return xmx[static_cast<std::size_t>(i * Specials + s)]; }
    float x(int i, Special s) const { return xmx[static_cast<std::size_t>(i * Specials + s)]; }
};

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
// the log-likelihood in nats.
float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full);

// Backward with the Forward pass's scale factors (so that posteriors come out
// as products); returns the log-likelihood in nats.
float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
               const DpMatrix& fwd, DpMatrix& bck, bool full);

}  // namespace alignscope::profile
