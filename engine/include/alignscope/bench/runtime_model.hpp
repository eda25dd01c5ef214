// A run-time model of the long-pair path, fitted per device (as CUDAlign did):
//
//   t(m, n) = a*m*n + b*(m + n) + c      seconds, a, b, c >= 0
//
// a is the time per DP cell, b the time per residue (reading, encoding,
// per-row and per-column work), c the fixed cost of a job (start-up, device
// set-up). It is fitted by non-negative least squares on the relative error,
// sum(((t_model - t) / t)^2), so a 10 kb point counts as much as a 5 Mb one,
// from observations of one (device, strategy, traceback on/off): bench --long
// points and earlier long-pair jobs.
//
// Fewer distinct pair sizes fit fewer parameters: 1 size fits a alone (a plain
// rate, cells / seconds), 2 sizes fit a and c, 3 or more fit a, b and c. A
// coefficient that would come out negative is held at 0 (the best fit with
// the others). When there are no more observations than parameters the fit
// goes through them exactly and says nothing about its error (`exact`).
#pragma once

#include <alignscope/store/results.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

struct RuntimeSample {
    double m = 0, n = 0;  // residues of the query and target
    double seconds = 0;   // end to end
};

struct RuntimeModel {
    double a = 0;             // seconds per cell
    double b = 0;             // seconds per residue (m + n)
    double c = 0;             // seconds per job
    int parameters = 0;       // fitted: 0 (no model), 1 (a), 2 (a, c), 3 (a, b, c)
    int free_parameters = 0;  // of those, not held at 0
    int samples = 0;          // observations used
    int sizes = 0;            // distinct (m, n) among them
    double relative_rms = 0;  // sqrt(mean(((t_model - t) / t)^2)) over the samples
    // Through every observation by construction (no more of them than free
    // parameters): the residual is no error estimate.
    bool exact() const { return samples <= free_parameters; }
    bool valid() const { return parameters > 0; }
    double predict(double m, double n) const { return a * m * n + b * (m + n) + c; }
    // "t = 2.5e-09 s*m*n + 0 s*(m+n) + 0.75 s; relative RMS 8.0 % over 6 points"
    std::string describe() const;
};

// Fits the model (see above). Throws Error naming the sample when an m, n or
// seconds is not a positive finite number; no samples give an invalid model.
RuntimeModel fit_runtime_model(const std::vector<RuntimeSample>& samples);

// The device (or set of devices) a model is fitted for, as one string: a set
// of GPUs in any of the spellings a job or point records it ("gpu:1,0",
// "gpu:0,gpu:1" as asked, "gpu:0+gpu:1" as the split runner names itself)
// becomes the registry's group id, indices ascending and once each
// ("gpu:0,1"); one GPU is "gpu:N"; anything else ("cpu", "gpu" for all of a
// machine's GPUs, whichever they are) is returned as it is. A model is only
// ever fitted to observations of one device set: nothing converts a single
// GPU's model into a prediction for several.
std::string device_set_id(std::string_view device);

// The observation in a stored bench --long point (series "long/..."): a square
// pair of its "length" (else x), end-to-end "seconds" with traceback, or
// "score_only_seconds" without; nothing when the point lacks the figure.
std::optional<RuntimeSample> long_bench_sample(const store::BenchPoint& point, bool traceback);

}  // namespace alignscope
