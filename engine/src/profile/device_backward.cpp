// The host's part of a device's parser Backward (filter_scan.hpp): the score
// from the recurrence's last N and the rows' scale factors, and a target's
// rows loaded into a parser matrix for the domain stage.
#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>

#include <algorithm>
#include <cmath>

namespace alignscope::profile {

float backward_score_of(float xN, float total_scale, int L) {
    if (std::isnan(xN)) throw Error("Backward score is NaN");
    if (L > 0 && xN == 0.0f) throw Error("Backward score underflow");
    if (std::isinf(xN)) throw Error("Backward score overflow");
    return static_cast<float>(total_scale + std::log(static_cast<double>(xN)));
}

void load_device_backward(const BackwardScores& device, std::size_t i, int M, int L, DpMatrix& bck) {
    if (i >= device.first_row.size() || i >= device.total_scale.size())
        throw Error("internal error: no device Backward rows for this target");
    const std::size_t n = (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials;
    const std::size_t from = device.first_row[i] * DpMatrix::Specials;
    if (from + n > device.specials.size()) throw Error("internal error: device Backward rows out of range");
    bck.resize(M, L, false);
    std::copy_n(device.specials.begin() + static_cast<std::ptrdiff_t>(from), n, bck.xmx.begin());
    bck.total_scale = device.total_scale[i];
}

bool device_backward_needs_cpu(const DpMatrix& fwd, const DpMatrix& bck) {
    // B before the row's division is the stored B times the factor, within a
    // rounding: the margin keeps every switch on the CPU's side.
    for (int i = 1; i < bck.L; ++i) {
        const float s = fwd.x(i, DpMatrix::Scale);
        const double before = static_cast<double>(bck.x(i, DpMatrix::B)) * static_cast<double>(s > 1.0f ? s : 1.0f);
        if (!(before <= 0.999e16)) return true;
    }
    const float xN = bck.x(0, DpMatrix::N);
    return !std::isfinite(xN) || (bck.L > 0 && xN == 0.0f);
}

}  // namespace alignscope::profile
