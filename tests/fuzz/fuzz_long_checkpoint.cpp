// libFuzzer target: arbitrary bytes as the checkpoint of a long-pair job
// (long_checkpoint.hpp), resumed the way `align --long --resume` resumes it.
//
// The input is a small container: byte 0 holds flags, and the rest is the
// manifest followed by row files, each after the separator kSeparator. The
// harness writes them into a scratch directory (long-pair.manifest and
// long-pair-row-<row>.bin: the k-th row file under the name of the manifest's
// k-th row when the manifest lists one, else under the row its own header
// names), then
//   1. LongCheckpoint::resume against the identity of a fixed small pair, and
//   2. align_long with --resume on the scalar pass runner (stage 1 below the
//      checkpoint, stages 2 and 3 through its rows).
// Both must end in a checkpoint / alignment or an alignscope::Error; never a
// crash, a sanitizer report, a hang or an allocation the files cannot justify.
//
// Flags (byte 0): bits 4-5 choose the job's mode (global, local, semi-global
// with all ends free, semi-global tb,te), the mode the seeds were written in.
// Bits 0-2 repair checksums after mutation, so the fuzzer gets past the CRCs
// into the contents: bit 0 the manifest's payload size and CRC-32, bit 1 each
// row file's, bit 2 the manifest's row checksums (set from the row files).
//
// What an accepted checkpoint must be is checked against the harness's own
// reading of the format (a parser of its own and a bitwise CRC-32): the rows,
// checksums, best cells and overview the engine loaded are those in the file,
// every row file listed is there, whole, and the one the manifest names (the
// "fooled" check), and nothing out of range got through. A checkpoint that
// needed no repair resumes to the reference alignment.
//
// Seeds: ALIGNSCOPE_FUZZ_WRITE_SEEDS=DIR fuzz_long_checkpoint writes the
// checkpoints our own writer leaves for this pair (killed half way, and after
// stage 1) into DIR and exits; tests/fuzz/corpus/long_checkpoint holds them.
#include "fuzz_support.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace alignscope;
using namespace alignscope::longpair;
using alignscope::fuzz::require;

namespace {

namespace fs = std::filesystem;
using I64 = std::int64_t;

constexpr std::string_view kSeparator = "\n=ALSROW=\n";
constexpr std::size_t kHeader = 24;  // magic, version, kind, payload size
constexpr int kModes = 4;
constexpr I64 kBandRows = 6;
constexpr int kOverview = 4;

// The fixed job: two related DNA sequences, EDNAFULL 10/0.5.
struct Job {
    std::string query, target;
    ScoringScheme scheme;
    Alignment reference[kModes];
};

AlignOptions align_options(int mode) {
    AlignOptions o;
    o.mode = mode == 0 ? AlignmentMode::Global : mode == 1 ? AlignmentMode::Local : AlignmentMode::SemiGlobal;
    if (mode == 2) o.free_ends = FreeEndGaps::parse("all");
    if (mode == 3) o.free_ends = FreeEndGaps::parse("tb,te");
    return o;
}

const Job& job() {
    static const Job j = [] {
        Job out;
        std::uint32_t state = 12345;
        auto next = [&state] {
            state = state * 1103515245u + 12345u;
            return state >> 16;
        };
        const char* letters = "ACGT";
        for (int k = 0; k < 52; ++k) out.target.push_back(letters[next() % 4]);
        // The query: a diverged copy of the target's middle, with an indel.
        for (int k = 6; k < 48; ++k) {
            if (k == 20) continue;
            out.query.push_back(next() % 8 == 0 ? letters[next() % 4] : out.target[static_cast<std::size_t>(k)]);
            if (k == 30) out.query += "GA";
        }
        out.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        for (int mode = 0; mode < kModes; ++mode)
            out.reference[mode] = align_reference(out.query, out.target, out.scheme, align_options(mode));
        return out;
    }();
    return j;
}

I64 query_length() { return static_cast<I64>(job().query.size()); }
I64 target_length() { return static_cast<I64>(job().target.size()); }

CheckpointIdentity identity(int mode) {
    const Job& j = job();
    const EncodedSequence q = encode(j.query, j.scheme.matrix, "query");
    const EncodedSequence t = encode(j.target, j.scheme.matrix, "target");
    return CheckpointIdentity::of(q.data(), static_cast<I64>(q.size()), t.data(), static_cast<I64>(t.size()), j.scheme,
                                  align_options(mode));
}

LongPairOptions long_options(int mode, const std::string& dir) {
    LongPairOptions o;
    o.align = align_options(mode);
    o.min_band_rows = kBandRows;
    o.threads = 1;
    o.overview_size = kOverview;
    o.checkpoint_dir = dir;
    o.checkpoint_every = 3600;  // a resumed job writes no checkpoint of its own here
    o.resume = true;
    o.keep_checkpoint = true;
    return o;
}

// The manifest as the harness reads it (its own reading of the layout in
// long_checkpoint.cpp): what it says, and where the row checksums lie.
struct ManifestView {
    bool whole = false;  // parsed to its end, nothing left over
    std::vector<I64> rows;
    std::vector<std::uint32_t> row_crcs;
    std::vector<std::size_t> crc_at;  // file offsets of the row checksums
    BestCell best, last_column;
    int overview_cols = 0;
    std::vector<I64> edges;
    std::vector<Score> overview;
};

ManifestView view_manifest(const std::string& file) {
    ManifestView v;
    std::size_t at = kHeader;
    const std::size_t end = file.size() >= kHeader + 4 ? file.size() - 4 : 0;
    auto have = [&](std::size_t bytes) { return at <= end && bytes <= end - at; };
    auto take = [&](auto& value) {
        if (!have(sizeof value)) return false;
        std::memcpy(&value, file.data() + at, sizeof value);
        at += sizeof value;
        return true;
    };
    std::uint32_t name_length = 0;
    at += 8 + 8 + 4 + 4;  // m, n, CRC-32 of the query and of the target
    if (!take(name_length) || !have(name_length)) return v;
    at += name_length + 4 + 12 + 1 + 4 + 1;  // matrix CRC, gaps and scale, mode, free ends, created
    std::uint64_t count = 0;
    if (!take(count)) return v;
    for (std::uint64_t k = 0; k < count; ++k) {
        I64 row = 0;
        std::uint32_t crc = 0;
        if (!take(row)) return v;
        v.crc_at.push_back(at);
        if (!take(crc)) return v;
        v.rows.push_back(row);
        v.row_crcs.push_back(crc);
    }
    for (BestCell* b : {&v.best, &v.last_column}) {
        std::int32_t score = 0;
        if (!take(score) || !take(b->i) || !take(b->j)) return v;
        b->score = score;
    }
    std::int32_t cols = 0;
    std::uint64_t blocks = 0;
    if (!take(cols) || !take(blocks) || cols < 0 || blocks > end / 8) return v;
    v.overview_cols = cols;
    v.edges.resize(static_cast<std::size_t>(blocks));
    for (I64& e : v.edges)
        if (!take(e)) return v;
    if (blocks * static_cast<std::uint64_t>(cols) > end / 4) return v;
    v.overview.resize(static_cast<std::size_t>(blocks * static_cast<std::uint64_t>(cols)));
    for (Score& s : v.overview)
        if (!take(s)) return v;
    v.whole = at == end;
    return v;
}

// The header's payload size and the trailing CRC-32 made right for the bytes there.
void repair(std::string& file) {
    if (file.size() < kHeader + 4) return;
    fuzz::store_le<std::uint64_t>(file.data() + 16, file.size() - kHeader - 4);
    fuzz::store_le<std::uint32_t>(file.data() + file.size() - 4, crc32_of(file.data(), file.size() - 4));
}

// The CRC-32 the manifest keeps for a row file: of its H and F values.
std::optional<std::uint32_t> row_values_crc(const std::string& row_file) {
    if (row_file.size() < kHeader + 16 + 4) return std::nullopt;
    return crc32_of(row_file.data() + kHeader + 16, row_file.size() - kHeader - 16 - 4);
}

std::string row_name(I64 row) {
    char name[64];
    std::snprintf(name, sizeof name, "long-pair-row-%012lld.bin", static_cast<long long>(row));
    return name;
}

bool in_score_range(I64 v) { return v >= I64{kNegInf} - (I64{1} << 29) && v <= (I64{1} << 29); }

// The checks on a checkpoint the engine accepted.
void check_accepted(const LongCheckpoint& c, const std::string& manifest,
                    const std::map<std::string, std::string>& files) {
    const CheckpointState& s = c.state();
    const I64 m = query_length(), n = target_length();
    // The manifest is whole (size and CRC, by our own CRC) and says what was loaded.
    require(manifest.size() >= kHeader + 4);
    require(fuzz::load_le<std::uint64_t>(manifest.data() + 16) == manifest.size() - kHeader - 4);
    require(fuzz::load_le<std::uint32_t>(manifest.data() + manifest.size() - 4) ==
            crc32_of(manifest.data(), manifest.size() - 4));
    const ManifestView v = view_manifest(manifest);
    require(v.whole);
    require(v.rows == s.rows && v.row_crcs == s.row_crcs);
    require(v.best.score == s.best.score && v.best.i == s.best.i && v.best.j == s.best.j);
    require(v.last_column.score == s.last_column.score && v.last_column.i == s.last_column.i &&
            v.last_column.j == s.last_column.j);
    require(v.overview_cols == s.overview_cols && v.edges == s.overview_row_edges && v.overview == s.overview);
    // Rows ascending inside the query; cells inside what the checkpoint covers.
    require(!s.rows.empty());
    for (std::size_t k = 0; k < s.rows.size(); ++k)
        require(s.rows[k] >= 1 && s.rows[k] <= m && (k == 0 || s.rows[k] > s.rows[k - 1]));
    const I64 last = s.last_row();
    require(in_score_range(s.best.score));
    require(s.best.i >= 0 && s.best.i <= last && s.best.j >= 0 && s.best.j <= n);
    if (s.best.score > 0) require(s.best.i >= 1 && s.best.j >= 1);
    require(in_score_range(s.last_column.score));
    require(s.last_column.i >= 0 && s.last_column.i <= last && s.last_column.j >= 0 && s.last_column.j <= n);
    if (s.last_column.score > kNegInf) require(s.last_column.i >= 1 && s.last_column.j == n);
    require(s.overview_cols >= 0 && s.overview_cols <= n);
    require(s.overview.size() == s.overview_row_edges.size() * static_cast<std::size_t>(s.overview_cols));
    for (std::size_t b = 0; b < s.overview_row_edges.size(); ++b)
        require(s.overview_row_edges[b] >= 1 && s.overview_row_edges[b] <= last &&
                (b == 0 || s.overview_row_edges[b] > s.overview_row_edges[b - 1]));
    for (Score x : s.overview) require(in_score_range(x));
    // Every row file listed: there, whole, of this row and target, with the
    // values the manifest's checksum was taken of.
    for (std::size_t k = 0; k < s.rows.size(); ++k) {
        const auto found = files.find(row_name(s.rows[k]));
        require(found != files.end());
        const std::string& f = found->second;
        require(f.size() == kHeader + 16 + 2 * static_cast<std::size_t>(n + 1) * sizeof(Score) + 4);
        require(fuzz::load_le<std::uint32_t>(f.data() + f.size() - 4) == crc32_of(f.data(), f.size() - 4));
        require(fuzz::load_le<I64>(f.data() + kHeader) == s.rows[k]);
        require(fuzz::load_le<I64>(f.data() + kHeader + 8) == n);
        require(row_values_crc(f) == s.row_crcs[k]);
        std::vector<Score> h, fv;
        c.read_row(k, h, fv);
        require(h.size() == static_cast<std::size_t>(n + 1) && fv.size() == h.size());
        require(std::memcmp(h.data(), f.data() + kHeader + 16, h.size() * sizeof(Score)) == 0);
        for (std::size_t j = 0; j < h.size(); ++j) require(in_score_range(h[j]) && in_score_range(fv[j]));
    }
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The checkpoints our writer leaves for the fixed job, as fuzz inputs.
void write_seeds(const std::string& out_dir) {
    fs::create_directories(out_dir);
    const Job& j = job();
    for (int mode = 0; mode < kModes; ++mode) {
        for (const bool whole : {false, true}) {
            const std::string dir = fuzz::scratch_directory() + "/seed";
            fs::remove_all(dir);
            LongPairOptions o = long_options(mode, dir);
            o.resume = false;
            o.checkpoint_every = 0;
            JobContext context;
            const double cells = double(j.query.size()) * double(j.target.size());
            if (!whole)  // killed half way (the pair is too small for the cancellation checks)
                context.progress = [&](const Progress& p) {
                    if (double(p.cells_done) >= 0.5 * cells) throw Cancelled();
                };
            auto runner = make_cpu_pass_runner();
            try {
                align_long(j.query, j.target, j.scheme, o, *runner, context);
            } catch (const Cancelled&) {
            }
            const std::string manifest = read_file(dir + "/" + kCheckpointManifest);
            require(!manifest.empty());
            std::string files = manifest;
            for (const I64 row : view_manifest(manifest).rows) {
                files += kSeparator;
                files += read_file(dir + "/" + row_name(row));
            }
            // As written, and with every repair flag (what mutations of it explore).
            const char* names[kModes] = {"global", "local", "semiglobal-all", "semiglobal-tb-te"};
            const std::string base = out_dir + "/" + names[mode] + (whole ? "-stage1-done" : "-half");
            auto put = [&](const std::string& path, unsigned flags, const std::string& bytes) {
                const std::string input = std::string(1, static_cast<char>(mode << 4 | flags)) + bytes;
                std::ofstream(path, std::ios::binary).write(input.data(), static_cast<std::streamsize>(input.size()));
                std::printf("%s: %zu bytes\n", path.c_str(), input.size());
            };
            put(base, 0, files);
            put(base + "-repair", 7, files);
            if (mode != 1 || whole) continue;
            // Malformed ones, from the local half-way checkpoint: the manifest cut
            // short; a byte of the first row file flipped (its CRC then wrong); the
            // same row with H = INT_MIN and every checksum repaired (a score no job
            // writes); a best cell below the checkpoint, checksums repaired.
            const std::size_t first_row = files.find(kSeparator) + kSeparator.size();
            put(base + "-manifest-cut", 0, files.substr(0, manifest.size() - 9) + files.substr(manifest.size()));
            std::string flipped = files;
            flipped[first_row + kHeader + 16 + 40] ^= 0x5a;
            put(base + "-row-flipped", 0, flipped);
            std::string low = files;
            fuzz::store_le<std::int32_t>(low.data() + first_row + kHeader + 16 + 4 * 5, INT32_MIN);
            put(base + "-row-int-min-repair", 7, low);
            std::string below = files;
            const std::size_t best_at = view_manifest(manifest).crc_at.back() + 4;  // after the last row's CRC
            fuzz::store_le<std::int32_t>(below.data() + best_at, 1 << 28);
            fuzz::store_le<I64>(below.data() + best_at + 4, query_length());
            put(base + "-best-below-checkpoint-repair", 7, below);
        }
    }
}

// ALIGNSCOPE_FUZZ_STATS=1: how the inputs ended, on stderr at exit.
struct Outcomes {
    std::uint64_t inputs = 0, loaded = 0, resumed = 0;
    std::map<std::string, std::uint64_t> job_errors;  // errors of jobs whose checkpoint loaded, digits dropped
    ~Outcomes() {
        if (!std::getenv("ALIGNSCOPE_FUZZ_STATS")) return;
        std::fprintf(stderr,
                     "fuzz_long_checkpoint: %llu inputs, %llu checkpoints loaded, %llu jobs resumed to an alignment\n",
                     static_cast<unsigned long long>(inputs), static_cast<unsigned long long>(loaded),
                     static_cast<unsigned long long>(resumed));
        for (const auto& [what, count] : job_errors)
            std::fprintf(stderr, "  %llu x %s\n", static_cast<unsigned long long>(count), what.c_str());
    }
} outcomes;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    (void)job();
    if (const char* seeds = std::getenv("ALIGNSCOPE_FUZZ_WRITE_SEEDS"); seeds && *seeds) {
        write_seeds(seeds);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    ++outcomes.inputs;
    const unsigned flags = data[0];
    const int mode = static_cast<int>((flags >> 4) & 3);
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

    // The manifest, then the row files.
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
        const std::size_t next = rest.find(kSeparator, at);
        parts.emplace_back(rest.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
        if (next == std::string_view::npos) break;
        at = next + kSeparator.size();
    }
    std::string manifest = std::move(parts.front());
    std::vector<std::string> rows(std::make_move_iterator(parts.begin() + 1), std::make_move_iterator(parts.end()));

    if (flags & 2)
        for (std::string& r : rows) repair(r);
    ManifestView view = view_manifest(manifest);
    if (flags & 4)
        for (std::size_t k = 0; k < rows.size() && k < view.crc_at.size(); ++k)
            if (const auto crc = row_values_crc(rows[k]))
                fuzz::store_le<std::uint32_t>(manifest.data() + view.crc_at[k], *crc);
    if (flags & 1) repair(manifest);
    view = view_manifest(manifest);

    const std::string& dir = fuzz::scratch_directory();
    fuzz::empty_directory(dir);
    std::map<std::string, std::string> files;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        I64 row = -1;
        if (k < view.rows.size()) row = view.rows[k];
        else if (rows[k].size() >= kHeader + 8)
            row = fuzz::load_le<I64>(rows[k].data() + kHeader);
        if (row < 0 || row >= 1'000'000'000'000) continue;
        files[row_name(row)] = rows[k];
    }
    for (const auto& [name, bytes] : files) fuzz::write_file(dir + "/" + name, bytes);
    fuzz::write_file(dir + "/" + kCheckpointManifest, manifest);

    // 1. Loading and checking, as --resume does first.
    bool accepted = false;
    try {
        const LongCheckpoint c = LongCheckpoint::resume(dir, identity(mode));
        check_accepted(c, manifest, files);
        accepted = true;
        ++outcomes.loaded;
    } catch (const Error& e) {
        require(std::string_view(e.what()).find("checkpoint") != std::string_view::npos);
    }

    // 2. The whole resumed job.
    const Job& j = job();
    try {
        auto runner = make_cpu_pass_runner();
        const Alignment a = align_long(j.query, j.target, j.scheme, long_options(mode, dir), *runner);
        require(accepted);  // the same checks ran first
        ++outcomes.resumed;
        const I64 m = query_length(), n = target_length();
        require(a.query_end >= 0 && a.query_end <= m && a.target_end >= 0 && a.target_end <= n);
        require(a.query_begin >= 0 && a.query_begin <= a.query_end + 1 && a.target_begin >= 0 &&
                a.target_begin <= a.target_end + 1);
        if ((flags & 7) == 0) {
            // Nothing repaired: a checkpoint our writer wrote, resumed to the right answer.
            const Alignment& ref = j.reference[mode];
            require(a.score == ref.score && a.query_end == ref.query_end && a.target_end == ref.target_end);
            if (!a.cigar.empty())
                require(rescore(a.cigar, j.query, j.target, a.query_begin, a.target_begin, j.scheme) == a.score);
        }
    } catch (const Error& e) {
        require(std::string_view(e.what()).size() > 0);
        if (accepted && std::getenv("ALIGNSCOPE_FUZZ_STATS")) {
            std::string what;
            for (char c : std::string_view(e.what()).substr(0, 90))
                if (c < '0' || c > '9') what.push_back(c);
            ++outcomes.job_errors[what];
        }
        // An unrepaired checkpoint that loaded resumes.
        require(!(accepted && (flags & 7) == 0));
    }
    return 0;
}
