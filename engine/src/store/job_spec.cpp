// Job specifications: building one from a pairwise job, the JSON form kept in
// the project, and rebuilding the scoring scheme from it.
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/store/job_spec.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>

#ifndef ALIGNSCOPE_VERSION
#define ALIGNSCOPE_VERSION "unknown"
#endif

namespace alignscope::store {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 6> kStateNames = {{
    {JobState::Queued, "queued"},
    {JobState::Running, "running"},
    {JobState::Done, "done"},
    {JobState::Failed, "failed"},
    {JobState::Cancelled, "cancelled"},
    {JobState::Interrupted, "interrupted"},
}};

// NCBI layout of the unscaled matrix, which SubstitutionMatrix::parse reads back.
std::string matrix_layout(const SubstitutionMatrix& matrix, int scale) {
    std::ostringstream out;
    out << "# " << matrix.name() << " (recorded by AlignScope)\n ";
    for (char letter : matrix.letters()) out << "  " << letter;
    out << '\n';
    for (int row = 0; row < matrix.size(); ++row) {
        out << matrix.letters()[static_cast<std::size_t>(row)];
        for (int col = 0; col < matrix.size(); ++col) {
            const int value = matrix.score(row, col) / scale;
            out << (value < 0 || value > 9 ? " " : "  ") << value;
        }
        out << '\n';
    }
    return out.str();
}

// The first two words of the kernel names (device/kernel_name.hpp): "sw_affine".
std::string algorithm_name(const PairJob& job) {
    return std::string(mode_word(job.options.mode)) + (job.scheme.linear() ? "_linear" : "_affine");
}

}  // namespace

std::string_view to_string(JobState state) {
    for (const auto& [value, name] : kStateNames)
        if (value == state) return name;
    return "queued";
}

JobState parse_job_state(std::string_view name) {
    for (const auto& [value, text] : kStateNames)
        if (text == name) return value;
    throw Error("unknown job state '" + std::string(name) +
                "' (expected queued, running, done, failed, cancelled or interrupted)");
}

bool is_final(JobState state) { return state != JobState::Queued && state != JobState::Running; }

std::string build_version() {
    std::string compiler;
#if defined(__clang__)
    compiler = "Clang " __clang_version__;
#elif defined(__GNUC__)
    compiler = "GCC " __VERSION__;
#else
    compiler = "unknown compiler";
#endif
#ifdef NDEBUG
    const char* checks = "";
#else
    const char* checks = ", assertions on";
#endif
    return std::string("AlignScope ") + ALIGNSCOPE_VERSION + " (" + compiler + checks + ")";
}

void JobSpec::set_scheme(const ScoringScheme& s) {
    scoring = s.describe();
    matrix_name = s.matrix.name();
    matrix_text = matrix_layout(s.matrix, s.scale);
    gap_open = s.to_user(s.gap_open);
    gap_extend = s.to_user(s.gap_extend);
    score_scale = s.scale;
}

ScoringScheme JobSpec::scheme() const {
    if (!has_scheme()) throw Error("job spec: no scoring scheme was recorded for this job");
    const SubstitutionMatrix matrix =
        SubstitutionMatrix::parse(matrix_text, matrix_name, "recorded matrix " + matrix_name);
    return ScoringScheme::create(matrix, gap_open, gap_extend);
}

JobSpec JobSpec::for_pair_job(std::string command, const PairJob& job, const DeviceInfo& device) {
    JobSpec spec;
    spec.command = std::move(command);
    spec.algorithm = algorithm_name(job);
    spec.mode = std::string(to_string(job.options.mode));
    if (job.options.mode == AlignmentMode::SemiGlobal) spec.free_ends = job.options.free_ends.to_string();
    spec.set_scheme(job.scheme);
    spec.devices = device.id;
    spec.streams = job.streams;
    spec.threads = job.threads;
    spec.kernel = job.kernel;
    spec.gpu_memory_budget = job.gpu_memory_budget;
    if (!device.driver_version.empty() || !device.runtime_version.empty())
        spec.driver_version = "driver " + device.driver_version + ", runtime " + device.runtime_version;
    spec.parameters["pairs"] = std::to_string(job.pairs.size());
    spec.parameters["cells"] = std::to_string(job.total_cells());
    spec.parameters["traceback"] = job.options.traceback ? "true" : "false";
    if (!device.name.empty()) spec.parameters["device_name"] = device.name;
    return spec;
}

std::string JobSpec::to_json() const {
    nlohmann::json j;
    j["command"] = command;
    j["algorithm"] = algorithm;
    j["mode"] = mode;
    j["free_ends"] = free_ends;
    j["scoring"] = scoring;
    j["matrix"] = {{"name", matrix_name}, {"text", matrix_text}};
    j["gap_open"] = gap_open;
    j["gap_extend"] = gap_extend;
    j["score_scale"] = score_scale;
    j["devices"] = devices;
    j["streams"] = streams;
    j["threads"] = threads;
    j["kernel"] = kernel;
    j["gpu_memory_budget"] = gpu_memory_budget;
    j["build_version"] = build_version;
    j["driver_version"] = driver_version;
    j["command_line"] = command_line;
    j["parameters"] = parameters;
    return j.dump();
}

JobSpec JobSpec::from_json(std::string_view json, const std::string& source) {
    try {
        const nlohmann::json j = nlohmann::json::parse(json);
        if (!j.is_object()) throw Error(source + ": the job spec is not a JSON object");
        JobSpec spec;
        // Every field is optional on reading, so a spec from an older writer
        // (fewer fields) still loads.
        auto get = [&j, &source](const char* key, auto& field) {
            auto found = j.find(key);
            if (found == j.end() || found->is_null()) return;
            using T = std::decay_t<decltype(field)>;
            if constexpr (std::is_integral_v<T>) {
                // A whole number in the field's range: nlohmann-json would convert
                // 1e30 or 2.5 (undefined behaviour) and wrap -1 or 2^32 silently.
                const bool fits = found->is_number_unsigned()  ? std::in_range<T>(found->get<std::uint64_t>())
                                  : found->is_number_integer() ? std::in_range<T>(found->get<std::int64_t>())
                                                               : !found->is_number();  // not a number: get_to says so
                if (!fits)
                    throw Error(source + ": the job spec's \"" + key + "\" is " + found->dump() +
                                ", not a whole number this field can hold");
            }
            found->get_to(field);
        };
        get("command", spec.command);
        get("algorithm", spec.algorithm);
        get("mode", spec.mode);
        get("free_ends", spec.free_ends);
        get("scoring", spec.scoring);
        if (auto matrix = j.find("matrix"); matrix != j.end() && matrix->is_object()) {
            if (matrix->contains("name")) matrix->at("name").get_to(spec.matrix_name);
            if (matrix->contains("text")) matrix->at("text").get_to(spec.matrix_text);
        }
        get("gap_open", spec.gap_open);
        get("gap_extend", spec.gap_extend);
        get("score_scale", spec.score_scale);
        get("devices", spec.devices);
        get("streams", spec.streams);
        get("threads", spec.threads);
        get("kernel", spec.kernel);
        get("gpu_memory_budget", spec.gpu_memory_budget);
        get("build_version", spec.build_version);
        get("driver_version", spec.driver_version);
        get("command_line", spec.command_line);
        get("parameters", spec.parameters);
        return spec;
    } catch (const nlohmann::json::exception& e) {
        throw Error(source + ": the job spec is not valid JSON for a job (" + e.what() + ")");
    }
}

}  // namespace alignscope::store
