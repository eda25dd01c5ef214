// Shared alignscope-cli flags.
#include "cli_options.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <cctype>
#include <cmath>
#include <iostream>
#include <optional>

namespace alignscope::cli {

void ScoringFlags::add_to(CLI::App& command, const std::string& default_mode) {
    mode = default_mode;
    command.add_option("--mode", mode, "Alignment mode: global, local or semiglobal")->capture_default_str();
    free_ends_option = command
                           .add_option("--free-ends", free_ends,
                                       "Semi-global: which end gaps are free, comma list of qb,qe,tb,te, or all/none")
                           ->capture_default_str();
    command.add_option("--matrix", matrix,
                       "Substitution matrix: a built-in name (BLOSUM45/50/62/80, PAM30/70/250, EDNAFULL) "
                       "or a file in NCBI/EMBOSS layout [default: BLOSUM62 for protein, EDNAFULL for DNA/RNA]");
    command.add_option("--match", match, "Nucleotide match score (instead of a matrix)");
    command.add_option("--mismatch", mismatch, "Nucleotide mismatch score (negative; instead of a matrix)");
    command.add_option("--gap-open", gap_open,
                       "Cost of a gap of length 1; a gap of length k costs open + (k-1)*extend [default: 10]");
    command.add_option("--gap-extend", gap_extend, "Cost of each further gap position [default: 0.5]");
    command.add_option("--alphabet", alphabet, "Override alphabet detection: dna, rna or protein");
}

AlignOptions ScoringFlags::align_options() const {
    AlignOptions options;
    options.mode = parse_mode(mode);
    options.free_ends = FreeEndGaps::parse(free_ends);
    if (free_ends_option && free_ends_option->count() && options.mode != AlignmentMode::SemiGlobal)
        throw Error("--free-ends applies to --mode semiglobal; in " + mode + " mode it would be ignored");
    return options;
}

std::optional<AlphabetKind> ScoringFlags::alphabet_override() const {
    if (alphabet.empty()) return std::nullopt;
    return parse_alphabet(alphabet);
}

ScoringScheme ScoringFlags::scheme(AlphabetKind kind) const {
    SubstitutionMatrix unscaled;
    if (match || mismatch) {
        if (!matrix.empty()) throw Error("--match/--mismatch and --matrix cannot be used together");
        if (!match || !mismatch) throw Error("--match and --mismatch must be given together");
        if (kind == AlphabetKind::Protein)
            throw Error("--match/--mismatch score nucleotides; protein sequences need --matrix (e.g. BLOSUM62)");
        if (*match != std::floor(*match) || *mismatch != std::floor(*mismatch) || std::fabs(*match) > 1e6 ||
            std::fabs(*mismatch) > 1e6)
            throw Error("--match and --mismatch must be integers");
        if (*match <= 0) throw Error("--match must be positive");
        if (*mismatch >= 0)
            throw Error("--mismatch must be negative (a mismatch costs), got " +
                        std::to_string(std::lround(*mismatch)));
        unscaled = SubstitutionMatrix::match_mismatch(static_cast<int>(*match), static_cast<int>(*mismatch));
    } else if (!matrix.empty()) {
        unscaled = SubstitutionMatrix::resolve(matrix);
    } else {
        unscaled = SubstitutionMatrix::builtin(kind == AlphabetKind::Protein ? "BLOSUM62" : "EDNAFULL");
    }
    if (kind == AlphabetKind::Protein && unscaled.is_nucleotide())
        throw Error("matrix " + unscaled.name() + " scores nucleotides but the sequences are protein");
    return ScoringScheme::create(unscaled, gap_open.value_or(10.0), gap_extend.value_or(0.5));
}

void DeviceFlags::add_to(CLI::App& command, const std::string& default_device) {
    device = default_device;
    command
        .add_option("--device", device,
                    "Where to run: cpu-ref (scalar reference), cpu (parasail SIMD), gpu (all GPUs), "
                    "gpu:N, gpu:0,1, or auto (GPUs if any, else cpu)")
        ->capture_default_str();
    command.add_option("--threads", threads, "CPU worker threads [default: all cores]")
        ->transform(strict_number<int>());
    command.add_option("--streams", streams, "CUDA streams per GPU [default: chosen from the device]")
        ->transform(strict_number<int>());
    command.add_option("--kernel", kernel, "Force a kernel/variant by name (see `devices`)")
        ->transform(kernel_of_today());
    command.add_option("--gpu-mem", gpu_mem, "GPU memory budget per device, e.g. 4G [default: 90% of free]");
    command.add_option("--timeline", timeline, "Write the kernel timeline as Chrome trace JSON to this file");
}

CLI::Validator kernel_of_today() {
    return CLI::Validator(
        [](std::string& text) {
            if (const std::optional<KernelName> today = read_renamed_kernel_name(text)) {
                std::cerr << "alignscope-cli: warning: --kernel '" << text << "' is the former name of "
                          << today->format() << "; read as " << today->format() << '\n';
                text = today->format();
            }
            return std::string();
        },
        "", "kernel name");
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& flag) {
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        throw Error(flag + ": '" + text + "' is not a size (e.g. 512M, 4G)");
    }
    std::string unit = text.substr(used);
    for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double factor = 1;
    if (unit.empty() || unit == "B") factor = 1;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        factor = 1024.0;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        factor = 1024.0 * 1024;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        factor = 1024.0 * 1024 * 1024;
    else
        throw Error(flag + ": unknown unit '" + unit + "' in '" + text + "' (use K, M or G)");
    if (!std::isfinite(value) || !(value > 0)) throw Error(flag + ": '" + text + "' is not a positive size");
    // A pebibyte is past any machine's memory.
    if (value * factor > 1024.0 * 1024 * 1024 * 1024 * 1024)
        throw Error(flag + ": '" + text + "' is too large (at most 1048576G)");
    return static_cast<std::uint64_t>(value * factor);
}

std::uint64_t DeviceFlags::gpu_memory_bytes() const {
    return gpu_mem.empty() ? 0 : parse_byte_size(gpu_mem, "--gpu-mem");
}

void DeviceFlags::apply(PairJob& job) const {
    if (threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (streams < 0 || streams > 128) throw Error("--streams must be between 1 and 128");
    job.threads = threads;
    job.streams = streams;
    job.kernel = kernel;
    job.gpu_memory_budget = gpu_memory_bytes();
}

void LongFlags::add_to(CLI::App& command, bool with_strategy) {
    if (with_strategy)
        strategy_option = command.add_option(
            "--strategy", strategy,
            "Long-pair GPU strategy: strips (one persistent kernel over row strips) or streams (--kernels kernels "
            "on --streams streams handing boundary columns over in global memory) [default: the backend's]");
    kernels_option = command
                         .add_option("--kernels", kernels,
                                     "Long-pair 'streams' strategy: number of concurrent row-strip kernels "
                                     "[default: chosen from the device]")
                         ->transform(strict_number<int>());
    special_rows_option =
        command.add_option("--special-rows-mem", special_rows_mem,
                           "Long-pair stage 1: memory for the saved special rows, e.g. 512M [default: 2G]");
}

bool LongFlags::given() const {
    for (const CLI::Option* o : {strategy_option, kernels_option, special_rows_option})
        if (o && o->count()) return true;
    return false;
}

LongRunnerSettings LongFlags::settings(const DeviceFlags& device) const {
    if (!strategy.empty() && strategy != "strips" && strategy != "streams")
        throw Error("--strategy: unknown strategy '" + strategy + "' (expected strips or streams)");
    if (kernels < 0 || kernels > 4096) throw Error("--kernels must be between 1 and 4096 (0: backend default)");
    if (device.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (device.streams < 0 || device.streams > 128) throw Error("--streams must be between 1 and 128");
    LongRunnerSettings s;
    s.strategy = strategy;
    s.kernels = kernels;
    s.streams = device.streams;
    s.gpu_memory_budget = device.gpu_memory_bytes();
    s.kernel = device.kernel;
    return s;
}

std::uint64_t LongFlags::special_row_budget() const {
    return special_rows_mem.empty() ? 0 : parse_byte_size(special_rows_mem, "--special-rows-mem");
}

}  // namespace alignscope::cli
