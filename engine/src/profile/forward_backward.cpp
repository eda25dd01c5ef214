// Forward and Backward in probability space (odds ratios against the null
// model), local multihit, with HMMER's sparse rescaling: a row whose E value
// passes 1e4 is divided by it and the factor's log is added to the total; the
// Backward pass divides by the same factors so that Forward x Backward gives
// posteriors directly.
#include <alignscope/error.hpp>
#include <alignscope/profile/filters.hpp>

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

float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full)
{
    const int M = om.length;
    fwd.resize(M, L, full);
    float xE = 0.0f, xN = 1.0f, xJ = 0.0f, xB = length.move, xC = 0.0f;
    fwd.x(0, DpMatrix::E) = xE;
    fwd.x(0, DpMatrix::N) = xN;
    fwd.x(0, DpMatrix::J) = xJ;
    fwd.x(0, DpMatrix::B) = xB;
    fwd.x(0, DpMatrix::C) = xC;
    fwd.x(0, DpMatrix::Scale) = 1.0f;
    float total = 0.0f;
    for (int i = 1; i <= L; ++i) {
        const float* e = om.match.data() + static_cast<std::size_t>(dsq[i - 1]) * static_cast<std::size_t>(M);
        float* mc = fwd.mmx.data() + fwd.cell(i, 0);
        float* ic = fwd.imx.data() + fwd.cell(i, 0);
        float* dc = fwd.dmx.data() + fwd.cell(i, 0);
        const float* mp = fwd.mmx.data() + fwd.cell(i - 1, 0);
        const float* ip = fwd.imx.data() + fwd.cell(i - 1, 0);
        const float* dp = fwd.dmx.data() + fwd.cell(i - 1, 0);
        mc[0] = ic[0] = dc[0] = 0.0f;
        xE = 0.0f;
        for (int k = 1; k <= M; ++k) {
            const std::size_t j = static_cast<std::size_t>(k - 1);
            float sv = xB * om.bm[j];
            sv += mp[k - 1] * om.mm[j];
            sv += ip[k - 1] * om.im[j];
            sv += dp[k - 1] * om.dm[j];
            sv *= e[j];
            mc[k] = sv;
            xE += sv;
            ic[k] = mp[k] * om.mi[j] + ip[k] * om.ii[j];  // insert emissions score 0: odds 1
        }
        dc[1] = 0.0f;
        for (int k = 2; k <= M; ++k)
            dc[k] = mc[k - 1] * om.md[static_cast<std::size_t>(k - 2)] + dc[k - 1] * om.dd[static_cast<std::size_t>(k - 2)];
        for (int k = 1; k <= M; ++k) xE += dc[k];  // local mode: D -> E too
        xN = xN * length.loop;
        xC = xC * length.loop + xE * om.e_move;
        xJ = xJ * length.loop + xE * om.e_loop;
        xB = xJ * length.move + xN * length.move;
        if (xE > 1.0e4f) {
            xN /= xE;
            xC /= xE;
            xJ /= xE;
            xB /= xE;
            const float inverse = static_cast<float>(1.0 / xE);
            for (int k = 0; k <= M; ++k) {
                mc[k] *= inverse;
                dc[k] *= inverse;
                ic[k] *= inverse;
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
