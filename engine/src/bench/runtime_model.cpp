// The long-pair run-time model (see runtime_model.hpp).
#include <alignscope/bench/runtime_model.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

namespace alignscope {
namespace {

// Columns of the design: 0 = m*n, 1 = m + n, 2 = 1, each divided by t (the
// relative error); the target is 1 for every row.
double feature(const RuntimeSample& s, int column) {
    const double f = column == 0 ? s.m * s.n : column == 1 ? s.m + s.n : 1.0;
    return f / s.seconds;
}

// Least squares on the given columns by modified Gram-Schmidt (twice, for
// orthogonality) on unit-scaled columns. False when the columns are
// (numerically) dependent.
bool solve(const std::vector<RuntimeSample>& samples, const std::vector<int>& columns, std::array<double, 3>& coef) {
    const std::size_t rows = samples.size(), k = columns.size();
    if (rows < k) return false;
    std::vector<std::vector<double>> q(k, std::vector<double>(rows));
    std::vector<double> scale(k);
    for (std::size_t j = 0; j < k; ++j) {
        double norm = 0;
        for (std::size_t i = 0; i < rows; ++i) {
            q[j][i] = feature(samples[i], columns[j]);
            norm += q[j][i] * q[j][i];
        }
        scale[j] = std::sqrt(norm);
        for (double& v : q[j]) v /= scale[j];
    }
    // R (upper triangular) of the scaled columns.
    std::array<std::array<double, 3>, 3> r{};
    for (std::size_t j = 0; j < k; ++j) {
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t p = 0; p < j; ++p) {
                double dot = 0;
                for (std::size_t i = 0; i < rows; ++i) dot += q[p][i] * q[j][i];
                r[p][j] += dot;
                for (std::size_t i = 0; i < rows; ++i) q[j][i] -= dot * q[p][i];
            }
        double norm = 0;
        for (double v : q[j]) norm += v * v;
        norm = std::sqrt(norm);
        if (norm < 1e-9) return false;  // this column is (nearly) a combination of the earlier ones
        r[j][j] = norm;
        for (double& v : q[j]) v /= norm;
    }
    // R x = Q' y with y = 1.
    std::array<double, 3> qty{};
    for (std::size_t j = 0; j < k; ++j)
        for (std::size_t i = 0; i < rows; ++i) qty[j] += q[j][i];
    std::array<double, 3> x{};
    for (std::size_t jj = k; jj-- > 0;) {
        double v = qty[jj];
        for (std::size_t p = jj + 1; p < k; ++p) v -= r[jj][p] * x[p];
        x[jj] = v / r[jj][jj];
    }
    coef = {0, 0, 0};
    for (std::size_t j = 0; j < k; ++j) coef[static_cast<std::size_t>(columns[j])] = x[j] / scale[j];
    return true;
}

double relative_rms(const std::vector<RuntimeSample>& samples, const std::array<double, 3>& coef) {
    double sum = 0;
    for (const RuntimeSample& s : samples) {
        const double model = coef[0] * s.m * s.n + coef[1] * (s.m + s.n) + coef[2];
        const double e = (model - s.seconds) / s.seconds;
        sum += e * e;
    }
    return samples.empty() ? 0 : std::sqrt(sum / double(samples.size()));
}

std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return text;
}

}  // namespace

std::string RuntimeModel::describe() const {
    if (!valid()) return "no model (no observations)";
    std::string text = "t = " + number(a) + " s*m*n";
    if (parameters >= 3) text += " + " + number(b) + " s*(m+n)";
    if (parameters >= 2) text += " + " + number(c) + " s";
    text += "; " + std::to_string(samples) + (samples == 1 ? " point" : " points") + " at " + std::to_string(sizes) +
            (sizes == 1 ? " size" : " sizes") + ", " + std::to_string(parameters) +
            (parameters == 1 ? " parameter" : " parameters");
    if (exact()) {
        text += ", exact fit (no error estimate)";
    } else {
        char rms[48];
        std::snprintf(rms, sizeof rms, ", relative RMS %.1f %%", relative_rms * 100);
        text += rms;
    }
    return text;
}

RuntimeModel fit_runtime_model(const std::vector<RuntimeSample>& samples) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const RuntimeSample& s = samples[i];
        auto good = [](double v) { return std::isfinite(v) && v > 0; };
        if (!good(s.m) || !good(s.n) || !good(s.seconds))
            throw Error("runtime model: observation " + std::to_string(i + 1) + " (m " + number(s.m) + ", n " +
                        number(s.n) + ", seconds " + number(s.seconds) +
                        ") is not usable: lengths and seconds must be positive");
    }
    RuntimeModel model;
    model.samples = static_cast<int>(samples.size());
    if (samples.empty()) return model;
    std::set<std::pair<double, double>> sizes;
    for (const RuntimeSample& s : samples) sizes.insert({s.m * s.n, s.m + s.n});
    model.sizes = static_cast<int>(sizes.size());

    // The columns the data can carry: a; a and c; a, b and c.
    const std::vector<int> allowed = model.sizes == 1   ? std::vector<int>{0}
                                     : model.sizes == 2 ? std::vector<int>{0, 2}
                                                        : std::vector<int>{0, 1, 2};
    // Non-negative least squares by trying every subset of the allowed
    // columns: the constrained optimum is the unconstrained one on its
    // support, so the best subset whose solution is non-negative is it.
    double best = std::numeric_limits<double>::infinity();
    std::array<double, 3> best_coef{};
    int rank = 0;
    const unsigned subsets = 1u << allowed.size();
    for (unsigned size = 1; size <= allowed.size(); ++size)
        for (unsigned mask = 1; mask < subsets; ++mask) {
            if (static_cast<unsigned>(std::popcount(mask)) != size) continue;
            std::vector<int> columns;
            for (std::size_t j = 0; j < allowed.size(); ++j)
                if (mask & (1u << j)) columns.push_back(allowed[j]);
            std::array<double, 3> coef{};
            if (!solve(samples, columns, coef)) continue;
            rank = std::max(rank, static_cast<int>(columns.size()));
            if (std::any_of(coef.begin(), coef.end(), [](double v) { return v < 0; })) continue;
            // Ties (within rounding) go to the fewer parameters, tried first.
            const double err = relative_rms(samples, coef);
            if (err < best - 1e-12) {
                best = err;
                best_coef = coef;
                model.free_parameters = static_cast<int>(columns.size());
            }
        }
    model.a = best_coef[0];
    model.b = best_coef[1];
    model.c = best_coef[2];
    model.parameters = rank;
    model.relative_rms = std::isfinite(best) ? best : 0;
    return model;
}

std::string device_set_id(std::string_view device) {
    // Items separated by ',' or '+', each "gpu:N" or (after the first) "N".
    std::set<int> indices;
    std::string_view rest = device;
    bool first = true;
    while (true) {
        const std::size_t cut = rest.find_first_of(",+");
        std::string_view item = rest.substr(0, cut);
        if (item.rfind("gpu:", 0) == 0) item.remove_prefix(4);
        else if (first)
            return std::string(device);
        int index = -1;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || index < 0)
            return std::string(device);
        indices.insert(index);
        first = false;
        if (cut == std::string_view::npos) break;
        rest.remove_prefix(cut + 1);
    }
    std::string id = "gpu:";
    for (int index : indices) id += (id.size() > 4 ? "," : "") + std::to_string(index);
    return id;
}

std::optional<RuntimeSample> long_bench_sample(const store::BenchPoint& point, bool traceback) {
    if (point.series.rfind("long/", 0) != 0) return std::nullopt;
    auto number_of = [&point](const char* key) {
        auto it = point.parameters.find(key);
        if (it == point.parameters.end()) return 0.0;
        const double v = std::strtod(it->second.c_str(), nullptr);
        return std::isfinite(v) ? v : 0.0;
    };
    double length = number_of("length");
    if (length <= 0) length = point.x;
    const double seconds = number_of(traceback ? "seconds" : "score_only_seconds");
    if (!(length > 0) || !std::isfinite(length) || seconds <= 0) return std::nullopt;
    return RuntimeSample{length, length, seconds};
}

}  // namespace alignscope
