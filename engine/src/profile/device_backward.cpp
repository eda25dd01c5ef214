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

}  // namespace alignscope::profile
