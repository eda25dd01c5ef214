// Forward and Backward in probability space (odds ratios against the null
// model), local multihit, with HMMER's sparse rescaling: a row whose E value
// passes 1e4 is divided by it and the factor's log is added to the total; the
// Backward pass divides by the same factors so that Forward x Backward gives
// posteriors directly.
#include <alignscope/error.hpp>
#include <alignscope/profile/filters.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace alignscope::profile {

void DpMatrix::resize(int model_length, int target_length, bool keep_all_rows)
{
    M = model_length;
    L = target_length;
    full = keep_all_rows;
    const std::size_t rows = full ? static_cast<std::size_t>(L + 1) : 2;
    const std::size_t cells = rows * static_cast<std::size_t>(M + 1);
    mmx.assign(cells, 0.0f);
    imx.assign(cells, 0.0f);
    dmx.assign(cells, 0.0f);
    xmx.assign(static_cast<std::size_t>(L + 1) * Specials, 0.0f);
    total_scale = 0.0f;
}

// Forward in HMMER's striped order of floating-point work (four lanes, node k
// in segment (k-1) % Q, lane (k-1) / Q; the D->D paths in up to four passes;
// E summed over lanes last): every product and sum happens in the same order as
// in hmmsearch, so scores, scale factors and the tracebacks drawn from the
// matrix agree with its own to the last bit, not just to rounding.
float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full)
{
    const int M = om.length;
    const int Q = std::max(2, (M - 1) / 4 + 1);
    const std::size_t W = static_cast<std::size_t>(4 * Q);
    fwd.resize(M, L, full);
    // Striped copies of the transitions: lane z of segment q is node z*Q + q + 1.
    auto stripe = [&](const std::vector<float>& v) {
        std::vector<float> out(W, 0.0f);
        for (int q = 0; q < Q; ++q)
            for (int z = 0; z < 4; ++z) {
                const int k = z * Q + q + 1;
                if (k <= M) out[static_cast<std::size_t>(q * 4 + z)] = v[static_cast<std::size_t>(k - 1)];
            }
        return out;
    };
    const auto tbm = stripe(om.bm), tmm = stripe(om.mm), tim = stripe(om.im), tdm = stripe(om.dm);
    const auto tmd = stripe(om.md), tmi = stripe(om.mi), tii = stripe(om.ii), tdd = stripe(om.dd);
    std::vector<std::vector<float>> emission(static_cast<std::size_t>(om.codes));
    for (int x = 0; x < om.codes; ++x) {
        std::vector<float> e(om.match.begin() + static_cast<std::ptrdiff_t>(x * M),
                             om.match.begin() + static_cast<std::ptrdiff_t>((x + 1) * M));
        emission[static_cast<std::size_t>(x)] = stripe(e);
    }
    std::vector<float> mp(W, 0.0f), ip(W, 0.0f), dp(W, 0.0f), mc(W), ic(W), dc(W);
    using Lanes = std::array<float, 4>;
    auto shift = [](const float* v) { return Lanes{0.0f, v[0], v[1], v[2]}; };

    float xE = 0.0f, xN = 1.0f, xJ = 0.0f, xB = length.move, xC = 0.0f;
    fwd.x(0, DpMatrix::E) = xE;
    fwd.x(0, DpMatrix::N) = xN;
    fwd.x(0, DpMatrix::J) = xJ;
    fwd.x(0, DpMatrix::B) = xB;
    fwd.x(0, DpMatrix::C) = xC;
    fwd.x(0, DpMatrix::Scale) = 1.0f;
    float total = 0.0f;
    for (int i = 1; i <= L; ++i) {
        const float* e = emission[dsq[i - 1]].data();
        Lanes dcv{0, 0, 0, 0}, xEv{0, 0, 0, 0};
        Lanes mpv = shift(&mp[W - 4]), dpv = shift(&dp[W - 4]), ipv = shift(&ip[W - 4]);
        for (int q = 0; q < Q; ++q) {
            const std::size_t o = static_cast<std::size_t>(q * 4);
            Lanes sv;
            for (int z = 0; z < 4; ++z) {
                float v = xB * tbm[o + z];
                v = v + mpv[z] * tmm[o + z];
                v = v + ipv[z] * tim[o + z];
                v = v + dpv[z] * tdm[o + z];
                v = v * e[o + z];
                sv[z] = v;
                xEv[z] = xEv[z] + v;
            }
            for (int z = 0; z < 4; ++z) {
                mpv[z] = mp[o + z];
                dpv[z] = dp[o + z];
                ipv[z] = ip[o + z];
                mc[o + z] = sv[z];
                dc[o + z] = dcv[z];
                dcv[z] = sv[z] * tmd[o + z];
                ic[o + z] = mpv[z] * tmi[o + z] + ipv[z] * tii[o + z];
            }
        }
        // D->D paths: one full pass, then up to three more across lane boundaries.
        dcv = shift(dcv.data());
        for (int z = 0; z < 4; ++z) dc[static_cast<std::size_t>(z)] = 0.0f;
        for (int q = 0; q < Q; ++q)
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                dc[c] = dcv[static_cast<std::size_t>(z)] + dc[c];
                dcv[static_cast<std::size_t>(z)] = dc[c] * tdd[c];
            }
        for (int j = 1; j < 4; ++j) {
            dcv = shift(dcv.data());
            bool changed = false;
            for (int q = 0; q < Q; ++q)
                for (int z = 0; z < 4; ++z) {
                    const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                    const float sum = dcv[static_cast<std::size_t>(z)] + dc[c];
                    changed |= sum > dc[c];
                    dc[c] = sum;
                    dcv[static_cast<std::size_t>(z)] = dcv[static_cast<std::size_t>(z)] * tdd[c];
                }
            if (M >= 100 && !changed) break;  // HMMER stops early on larger models
        }
        for (int q = 0; q < Q; ++q)
            for (int z = 0; z < 4; ++z) xEv[static_cast<std::size_t>(z)] = dc[static_cast<std::size_t>(q * 4 + z)] + xEv[static_cast<std::size_t>(z)];
        xE = (xEv[0] + xEv[1]) + (xEv[2] + xEv[3]);
        xN = xN * length.loop;
        xC = (xC * length.loop) + (xE * om.e_move);
        xJ = (xJ * length.loop) + (xE * om.e_loop);
        xB = (xJ * length.move) + (xN * length.move);
        if (xE > 1.0e4f) {
            xN = xN / xE;
            xC = xC / xE;
            xJ = xJ / xE;
            xB = xB / xE;
            const float inverse = static_cast<float>(1.0 / xE);
            for (std::size_t c = 0; c < W; ++c) {
                mc[c] *= inverse;
                dc[c] *= inverse;
                ic[c] *= inverse;
            }
            fwd.x(i, DpMatrix::Scale) = xE;
            total += static_cast<float>(std::log(static_cast<double>(xE)));
            xE = 1.0f;
        } else {
            fwd.x(i, DpMatrix::Scale) = 1.0f;
        }
        fwd.x(i, DpMatrix::E) = xE;
        fwd.x(i, DpMatrix::N) = xN;
        fwd.x(i, DpMatrix::J) = xJ;
        fwd.x(i, DpMatrix::B) = xB;
        fwd.x(i, DpMatrix::C) = xC;
        // The row in node order for the domain stage's readers.
        float* rm = fwd.mmx.data() + fwd.cell(i, 0);
        float* ri = fwd.imx.data() + fwd.cell(i, 0);
        float* rd = fwd.dmx.data() + fwd.cell(i, 0);
        rm[0] = ri[0] = rd[0] = 0.0f;
        for (int k = 1; k <= M; ++k) {
            const std::size_t c = static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q);
            rm[k] = mc[c];
            ri[k] = ic[c];
            rd[k] = dc[c];
        }
        std::swap(mp, mc);
        std::swap(ip, ic);
        std::swap(dp, dc);
    }
    fwd.total_scale = total;
    if (std::isnan(xC)) throw Error("Forward score is NaN");
    if (L > 0 && xC == 0.0f) throw Error("Forward score underflow");
    if (std::isinf(xC)) throw Error("Forward score overflow");
    return static_cast<float>(total + std::log(static_cast<double>(xC * length.move)));
}

float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
               const DpMatrix& fwd, DpMatrix& bck, bool full)
{
    const int M = om.length;
    bck.resize(M, L, full);
    auto scale_row = [&](int i, float* mc, float* ic, float* dc, float& xE, float& xN, float& xJ, float& xB, float& xC) {
        const float s = fwd.x(i, DpMatrix::Scale);
        bck.x(i, DpMatrix::Scale) = s;
        if (s > 1.0f) {
            xE /= s;
            xN /= s;
            xJ /= s;
            xB /= s;
            xC /= s;
            const float inverse = static_cast<float>(1.0 / s);
            for (int k = 0; k <= M; ++k) {
                mc[k] *= inverse;
                dc[k] *= inverse;
                ic[k] *= inverse;
            }
            bck.total_scale += static_cast<float>(std::log(static_cast<double>(s)));
        }
        bck.x(i, DpMatrix::E) = xE;
        bck.x(i, DpMatrix::N) = xN;
        bck.x(i, DpMatrix::J) = xJ;
        bck.x(i, DpMatrix::B) = xB;
        bck.x(i, DpMatrix::C) = xC;
    };
    // Row L: only the path to C and T remains.
    float xJ = 0.0f, xB = 0.0f, xN = 0.0f;
    float xC = length.move;
    float xE = xC * om.e_move;
    {
        float* mc = bck.mmx.data() + bck.cell(L, 0);
        float* ic = bck.imx.data() + bck.cell(L, 0);
        float* dc = bck.dmx.data() + bck.cell(L, 0);
        mc[0] = ic[0] = dc[0] = 0.0f;
        dc[M] = xE;
        for (int k = M - 1; k >= 1; --k) dc[k] = xE + om.dd[static_cast<std::size_t>(k - 1)] * dc[k + 1];
        for (int k = 1; k <= M; ++k) {
            ic[k] = 0.0f;
            mc[k] = xE + (k < M ? om.md[static_cast<std::size_t>(k - 1)] * dc[k + 1] : 0.0f);
        }
        bck.total_scale = 0.0f;
        scale_row(L, mc, ic, dc, xE, xN, xJ, xB, xC);
        bck.total_scale = static_cast<float>(std::log(static_cast<double>(fwd.x(L, DpMatrix::Scale))));
    }
    for (int i = L - 1; i >= 1; --i) {
        const float* e = om.match.data() + static_cast<std::size_t>(dsq[i]) * static_cast<std::size_t>(M);  // x_{i+1}
        float* mc = bck.mmx.data() + bck.cell(i, 0);
        float* ic = bck.imx.data() + bck.cell(i, 0);
        float* dc = bck.dmx.data() + bck.cell(i, 0);
        const float* mp = bck.mmx.data() + bck.cell(i + 1, 0);
        const float* ip = bck.imx.data() + bck.cell(i + 1, 0);
        xB = 0.0f;
        for (int k = 1; k <= M; ++k) xB += mp[k] * e[k - 1] * om.bm[static_cast<std::size_t>(k - 1)];
        xC = xC * length.loop;
        xJ = xB * length.move + xJ * length.loop;
        xN = xB * length.move + xN * length.loop;
        xE = xC * om.e_move + xJ * om.e_loop;
        // From the last node back: D and M need D(i,k+1) of this row.
        mc[0] = ic[0] = dc[0] = 0.0f;
        for (int k = M; k >= 1; --k) {
            const std::size_t j = static_cast<std::size_t>(k - 1);
            const float next_match = k < M ? mp[k + 1] * e[k] : 0.0f;  // M(i+1,k+1) e(k+1, x_{i+1})
            const float into_mm = k < M ? om.mm[static_cast<std::size_t>(k)] : 0.0f;
            const float into_im = k < M ? om.im[static_cast<std::size_t>(k)] : 0.0f;
            const float into_dm = k < M ? om.dm[static_cast<std::size_t>(k)] : 0.0f;
            const float next_delete = k < M ? dc[k + 1] : 0.0f;
            ic[k] = ip[k] * om.ii[j] + next_match * into_im;
            dc[k] = next_match * into_dm + xE + om.dd[j] * next_delete;
            mc[k] = ip[k] * om.mi[j] + next_match * into_mm + xE + om.md[j] * next_delete;
        }
        scale_row(i, mc, ic, dc, xE, xN, xJ, xB, xC);
    }
    // Row 0: only N and B.
    {
        const float* mp = bck.mmx.data() + bck.cell(1, 0);
        const float* e = om.match.data() + static_cast<std::size_t>(dsq[0]) * static_cast<std::size_t>(M);
        xB = 0.0f;
        for (int k = 1; k <= M; ++k) xB += mp[k] * e[k - 1] * om.bm[static_cast<std::size_t>(k - 1)];
        xN = xB * length.move + xN * length.loop;
        bck.x(0, DpMatrix::B) = xB;
        bck.x(0, DpMatrix::C) = 0.0f;
        bck.x(0, DpMatrix::J) = 0.0f;
        bck.x(0, DpMatrix::N) = xN;
        bck.x(0, DpMatrix::E) = 0.0f;
        bck.x(0, DpMatrix::Scale) = 1.0f;
        if (full) {
            float* mc = bck.mmx.data() + bck.cell(0, 0);
            for (int k = 0; k <= M; ++k) mc[k] = 0.0f;
        }
    }
    if (std::isnan(xN)) throw Error("Backward score is NaN");
    if (L > 0 && xN == 0.0f) throw Error("Backward score underflow");
    if (std::isinf(xN)) throw Error("Backward score overflow");
    return static_cast<float>(bck.total_scale + std::log(static_cast<double>(xN)));
}

}  // namespace alignscope::profile
