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
    // Where node k sits in the striped row.
    std::vector<std::size_t> node_cell(static_cast<std::size_t>(M + 1), 0);
    for (int k = 1; k <= M; ++k) node_cell[static_cast<std::size_t>(k)] = static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q);
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
            const std::size_t c = node_cell[static_cast<std::size_t>(k)];
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

// Backward in the same striped order as HMMER's (the mirror image of Forward:
// segments walked from the last, values shifted down a lane where a node's
// successor sits in the next lane), with the Forward pass's scale factors.
float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
               const DpMatrix& fwd, DpMatrix& bck, bool full)
{
    const int M = om.length;
    const int Q = std::max(2, (M - 1) / 4 + 1);
    const std::size_t W = static_cast<std::size_t>(4 * Q);
    // Where node k sits in the striped row.
    std::vector<std::size_t> node_cell(static_cast<std::size_t>(M + 1), 0);
    for (int k = 1; k <= M; ++k) node_cell[static_cast<std::size_t>(k)] = static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q);
    bck.resize(M, L, full);
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
    using Lanes = std::array<float, 4>;
    // Lane z takes lane z+1 (the next node of the same segment index), 0 in the last.
    auto down = [](const float* v) { return Lanes{v[1], v[2], v[3], 0.0f}; };
    auto seg = [](std::vector<float>& v, int q) { return v.data() + static_cast<std::size_t>(q * 4); };
    auto cseg = [](const std::vector<float>& v, int q) { return v.data() + static_cast<std::size_t>(q * 4); };
    std::vector<float> mc(W), ic(W), dc(W), mp(W), ip(W), dp(W);

    auto store = [&](int i, float xE, float xN, float xJ, float xB, float xC) {
        bck.x(i, DpMatrix::E) = xE;
        bck.x(i, DpMatrix::N) = xN;
        bck.x(i, DpMatrix::J) = xJ;
        bck.x(i, DpMatrix::B) = xB;
        bck.x(i, DpMatrix::C) = xC;
        float* rm = bck.mmx.data() + bck.cell(i, 0);
        float* ri = bck.imx.data() + bck.cell(i, 0);
        float* rd = bck.dmx.data() + bck.cell(i, 0);
        rm[0] = ri[0] = rd[0] = 0.0f;
        for (int k = 1; k <= M; ++k) {
            const std::size_t c = node_cell[static_cast<std::size_t>(k)];
            rm[k] = mc[c];
            ri[k] = ic[c];
            rd[k] = dc[c];
        }
    };
    auto rescale = [&](int i, float& xE, float& xN, float& xJ, float& xB, float& xC) {
        const float s = fwd.x(i, DpMatrix::Scale);
        bck.x(i, DpMatrix::Scale) = s;
        if (s > 1.0f) {
            xE = xE / s;
            xN = xN / s;
            xC = xC / s;
            xJ = xJ / s;
            xB = xB / s;
            const float inverse = static_cast<float>(1.0 / s);
            for (std::size_t c = 0; c < W; ++c) {
                mc[c] *= inverse;
                dc[c] *= inverse;
                ic[c] *= inverse;
            }
            return true;
        }
        return false;
    };

    // Row L: only the path to C and T remains.
    float xJ = 0.0f, xB = 0.0f, xN = 0.0f;
    float xC = length.move;
    float xE = xC * om.e_move;
    {
        for (std::size_t c = 0; c < W; ++c) {
            mc[c] = dc[c] = xE;
            ic[c] = 0.0f;
        }
        Lanes dpv = down(seg(dc, Q - 1)), dcv{};
        for (int q = Q - 1; q >= 0; --q)
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                dcv[static_cast<std::size_t>(z)] = dpv[static_cast<std::size_t>(z)] * tdd[c];
                dc[c] = dc[c] + dcv[static_cast<std::size_t>(z)];
                dpv[static_cast<std::size_t>(z)] = dc[c];
            }
        for (int j = 1; j < 4; ++j) {
            dcv = down(dcv.data());
            for (int q = Q - 1; q >= 0; --q)
                for (int z = 0; z < 4; ++z) {
                    const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                    dcv[static_cast<std::size_t>(z)] = dcv[static_cast<std::size_t>(z)] * tdd[c];
                    dc[c] = dc[c] + dcv[static_cast<std::size_t>(z)];
                }
        }
        dcv = down(seg(dc, 0));
        for (int q = Q - 1; q >= 0; --q) {
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                mc[c] = mc[c] + dcv[static_cast<std::size_t>(z)] * tmd[c];
            }
            for (int z = 0; z < 4; ++z) dcv[static_cast<std::size_t>(z)] = dc[static_cast<std::size_t>(q * 4 + z)];
        }
        rescale(L, xE, xN, xJ, xB, xC);
        bck.total_scale = static_cast<float>(std::log(static_cast<double>(fwd.x(L, DpMatrix::Scale))));
        store(L, xE, xN, xJ, xB, xC);
    }
    for (int i = L - 1; i >= 1; --i) {
        std::swap(mp, mc);
        std::swap(ip, ic);
        std::swap(dp, dc);
        const float* e = emission[dsq[i]].data();  // residue i+1
        Lanes tmmv = down(cseg(tmm, 0)), timv = down(cseg(tim, 0)), tdmv = down(cseg(tdm, 0));
        Lanes mpv;
        for (int z = 0; z < 4; ++z) mpv[static_cast<std::size_t>(z)] = mp[static_cast<std::size_t>(z)] * e[z];
        mpv = down(mpv.data());
        Lanes xBv{0, 0, 0, 0};
        for (int q = Q - 1; q >= 0; --q) {
            const std::size_t o = static_cast<std::size_t>(q * 4);
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = o + static_cast<std::size_t>(z);
                const float ipv = ip[c];
                ic[c] = (ipv * tii[c]) + (mpv[static_cast<std::size_t>(z)] * timv[static_cast<std::size_t>(z)]);
                dc[c] = mpv[static_cast<std::size_t>(z)] * tdmv[static_cast<std::size_t>(z)];
                const float mcv = (ipv * tmi[c]) + (mpv[static_cast<std::size_t>(z)] * tmmv[static_cast<std::size_t>(z)]);
                mpv[static_cast<std::size_t>(z)] = mp[c] * e[c];
                mc[c] = mcv;
                tdmv[static_cast<std::size_t>(z)] = tdm[c];
                timv[static_cast<std::size_t>(z)] = tim[c];
                tmmv[static_cast<std::size_t>(z)] = tmm[c];
                xBv[static_cast<std::size_t>(z)] = xBv[static_cast<std::size_t>(z)] + mpv[static_cast<std::size_t>(z)] * tbm[c];
            }
        }
        xB = (xBv[0] + xBv[1]) + (xBv[2] + xBv[3]);
        xC = xC * length.loop;
        xJ = (xB * length.move) + (xJ * length.loop);
        xN = (xB * length.move) + (xN * length.loop);
        xE = (xC * om.e_move) + (xJ * om.e_loop);
        // {M,D} -> E and one step of D -> D.
        Lanes dpv;
        for (int z = 0; z < 4; ++z) dpv[static_cast<std::size_t>(z)] = dc[static_cast<std::size_t>(z)] + xE;
        dpv = down(dpv.data());
        Lanes dcv{};
        for (int q = Q - 1; q >= 0; --q)
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                dcv[static_cast<std::size_t>(z)] = dpv[static_cast<std::size_t>(z)] * tdd[c];
                dc[c] = dc[c] + (dcv[static_cast<std::size_t>(z)] + xE);
                dpv[static_cast<std::size_t>(z)] = dc[c];
                mc[c] = mc[c] + xE;
            }
        for (int j = 1; j < 4; ++j) {
            dcv = down(dcv.data());
            for (int q = Q - 1; q >= 0; --q)
                for (int z = 0; z < 4; ++z) {
                    const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                    dcv[static_cast<std::size_t>(z)] = dcv[static_cast<std::size_t>(z)] * tdd[c];
                    dc[c] = dc[c] + dcv[static_cast<std::size_t>(z)];
                }
        }
        dcv = down(seg(dc, 0));
        for (int q = Q - 1; q >= 0; --q) {
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                mc[c] = mc[c] + dcv[static_cast<std::size_t>(z)] * tmd[c];
            }
            for (int z = 0; z < 4; ++z) dcv[static_cast<std::size_t>(z)] = dc[static_cast<std::size_t>(q * 4 + z)];
        }
        if (rescale(i, xE, xN, xJ, xB, xC))
            bck.total_scale += static_cast<float>(std::log(static_cast<double>(bck.x(i, DpMatrix::Scale))));
        store(i, xE, xN, xJ, xB, xC);
    }
    // Row 0: only N and B.
    {
        const float* e = emission[dsq[0]].data();
        const std::vector<float>& m1 = mc;  // row 1, the last one computed
        Lanes xBv{0, 0, 0, 0};
        for (int q = 0; q < Q; ++q)
            for (int z = 0; z < 4; ++z) {
                const std::size_t c = static_cast<std::size_t>(q * 4 + z);
                float mpv = m1[c] * e[c];
                mpv = mpv * tbm[c];
                xBv[static_cast<std::size_t>(z)] = xBv[static_cast<std::size_t>(z)] + mpv;
            }
        xB = (xBv[0] + xBv[1]) + (xBv[2] + xBv[3]);
        xN = (xB * length.move) + (xN * length.loop);
        bck.x(0, DpMatrix::B) = xB;
        bck.x(0, DpMatrix::C) = 0.0f;
        bck.x(0, DpMatrix::J) = 0.0f;
        bck.x(0, DpMatrix::N) = xN;
        bck.x(0, DpMatrix::E) = 0.0f;
        bck.x(0, DpMatrix::Scale) = 1.0f;
        if (full) {
            float* rm = bck.mmx.data() + bck.cell(0, 0);
            for (int k = 0; k <= M; ++k) rm[k] = 0.0f;
        }
    }
    if (std::isnan(xN)) throw Error("Backward score is NaN");
    if (L > 0 && xN == 0.0f) throw Error("Backward score underflow");
    if (std::isinf(xN)) throw Error("Backward score overflow");
    return static_cast<float>(bck.total_scale + std::log(static_cast<double>(xN)));
}

}  // namespace alignscope::profile
