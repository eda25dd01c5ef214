// `alignscope-cli allvsall SET.fa [--against OTHER.fa]`: every pair i < j of a
// set (or every pair of two sets), scored tile by tile with the lengths
// sorted, the pairs that pass --min-score / --min-normalised / --top traced
// back, and the pair table, distance matrix and clusters written from the
// result spool. Under mpirun (a build with MPI) rank 0 deals the tiles and
// alone writes the outputs and the checkpoint; the other ranks compute.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/outputs.hpp>
#include <alignscope/allvsall/spool.hpp>
#include <alignscope/allvsall/tile_deal.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#ifdef ALIGNSCOPE_WITH_MPI
#include <alignscope/mpi/tile_dealer.hpp>
#endif
#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/allvsall_scorer.hpp>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace alignscope::cli {
namespace {

struct AllVsAllFlags {
    std::string set_path, against_path;
    std::string format = "tsv";
    std::string output = "-";
    ScoringFlags scoring;
    DeviceFlags device;
    std::optional<double> min_score, min_normalised;
    std::uint32_t top = 0;
    std::string distance = "score";
    std::string matrix_out, clusters;
    double cluster_threshold = 0.9;
    std::uint32_t tile = 0;  // 0: by the device (tile_for)
    std::string checkpoint_dir;
    double checkpoint_every = 60;
    bool resume = false;
    bool quiet = false;
    bool stats = false;  // under mpirun: each rank's times
    ProjectFlag project;
    CLI::Option* tile_option = nullptr;
};

bool is_nucleotide(AlphabetKind kind) { return kind != AlphabetKind::Protein; }

// The ranks of an mpirun, from the environment mpirun sets (no MPI call).
int ranks_from_environment() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
        if (const char* v = std::getenv(name)) return std::atoi(v);
    return 1;
}

// What every rank needs: the inputs, as rank 0 read them.
struct Inputs {
    SequenceSet set, against;
    bool has_against = false;
};

Inputs read_inputs(const AllVsAllFlags& flags) {
    Inputs in;
    ReadOptions options;
    options.alphabet = flags.scoring.alphabet_override();
    in.set = read_sequences(flags.set_path, options);
    if (in.set.records.empty()) throw Error(flags.set_path + ": no sequences");
    if (!flags.against_path.empty()) {
        in.has_against = true;
        in.against = read_sequences(flags.against_path, options);
        if (in.against.records.empty()) throw Error(flags.against_path + ": no sequences");
        if (is_nucleotide(in.set.alphabet) != is_nucleotide(in.against.alphabet))
            throw Error(flags.set_path + " holds " + std::string(to_string(in.set.alphabet)) + " but " +
                        flags.against_path + " holds " + std::string(to_string(in.against.alphabet)) +
                        " sequences (use --alphabet to override detection)");
    } else if (in.set.records.size() < 2) {
        throw Error(flags.set_path + ": one sequence; all against all needs at least two");
    }
    return in;
}

// Records per tile side: --tile, else 512 on a GPU (about 130,000 pairs a batch,
// enough to fill one) and 128 on CPUs (8,128 pairs: a checkpoint every few seconds).
std::uint32_t tile_for(const AllVsAllFlags& flags, Backend& backend) {
    if (flags.tile > 65536) throw Error("--tile must be between 1 and 65536");
    if (flags.tile > 0) return flags.tile;
    return backend.info().kind == "gpu" ? 512 : 128;
}

allvsall::Problem build_problem(const AllVsAllFlags& flags, const Inputs& in, std::uint32_t tile) {
    if (flags.format != "tsv") throw Error("--format: allvsall writes tsv (got '" + flags.format + "')");
    if (flags.min_normalised && !(*flags.min_normalised > -1e9 && *flags.min_normalised < 1e9))
        throw Error("--min-normalised must be a number");
    if (flags.resume && flags.checkpoint_dir.empty())
        throw Error("--resume needs --checkpoint DIR, the directory of the checkpoint to go on from");
    if (!(flags.checkpoint_every >= 0) || flags.checkpoint_every > 1e9)
        throw Error("--checkpoint-every must be 0 or a positive number of seconds");
    AlignOptions options = flags.scoring.align_options();
    allvsall::TraceCriteria trace;
    trace.min_score = flags.min_score;
    trace.min_normalised = flags.min_normalised;
    trace.top = flags.top;
    trace.all = allvsall::parse_distance(flags.distance) == allvsall::Distance::Identity;
    allvsall::Problem p = allvsall::make_problem(in.set.records, in.has_against ? &in.against.records : nullptr,
                                                 flags.scoring.scheme(in.set.alphabet), options, trace, tile);
    PairJob settings;
    flags.device.apply(settings);
    p.threads = settings.threads;
    p.streams = settings.streams;
    p.kernel = settings.kernel;
    p.gpu_memory_budget = settings.gpu_memory_budget;
    return p;
}

allvsall::OutputFiles output_files(const AllVsAllFlags& flags) {
    allvsall::OutputFiles files;
    files.table = flags.output;
    files.matrix = flags.matrix_out;
    files.distance = allvsall::parse_distance(flags.distance);
    files.clusters = flags.clusters;
    files.cluster_threshold = flags.cluster_threshold;
    return files;
}

// The GPU scan scorer of `backend` when it has one for this job (see
// allvsall_scorer.hpp), else null: the backend's pairwise kernels score the tiles.
std::unique_ptr<allvsall::TileScorer> make_scorer(const allvsall::Problem& problem, Backend& backend,
                                                  JobContext& context) {
#ifdef ALIGNSCOPE_WITH_CUDA
    std::string why_not;
    std::unique_ptr<allvsall::TileScorer> scorer;
    // A scorer's scores are 32-bit; the pairwise path carries any score.
    if (!problem.scores_fit_32_bits()) why_not = "scores may pass 32 bits with these lengths and this scheme";
    else
        scorer = kernels::make_cuda_tile_scorer(problem, backend, context, &why_not);
    // A GPU that keeps the pairwise kernels says why (not for a --kernel the user chose).
    if (!scorer && backend.info().kind == "gpu" && problem.kernel.empty() && !why_not.empty())
        std::cerr << "allvsall: " << backend.info().id << " scores with the pairwise kernels: " << why_not << '\n';
    return scorer;
#else
    (void)problem;
    (void)backend;
    (void)context;
    return nullptr;
#endif
}

// " (scores: KERNEL)" for the summary line when a scorer ran the scores.
std::string scorer_note(const allvsall::TileScorer* scorer) {
    return scorer ? " (scores: " + scorer->describe() + ")" : std::string();
}

// Shows progress over the whole job (tiles in order) and passes results to the spool.
class ProgressSink : public allvsall::TileSink {
public:
    ProgressSink(allvsall::ResultSpool& spool, const allvsall::Problem& problem, TerminalProgress& progress,
                 store::JobRecording* recording = nullptr)
        : spool_(spool), problem_(problem), progress_(progress), recording_(recording) {}
    void put(allvsall::TileResult&& r) override {
        spool_.put(std::move(r));
        Progress p;
        p.cells_done = spool_.cells_done();
        p.cells_total = problem_.tiling.cell_count();
        p.items_done = spool_.pairs_done();
        p.items_total = problem_.tiling.pair_count();
        progress_(p);
        if (recording_) recording_->progress(p);
    }

private:
    allvsall::ResultSpool& spool_;
    const allvsall::Problem& problem_;
    TerminalProgress& progress_;
    store::JobRecording* recording_;
};

// --project: the job (scheme, device, criteria), its inputs and progress, and
// at the end every pair traced back as an alignment (the scores of all pairs
// stay in the pair table). Null without --project.
std::unique_ptr<store::JobRecording> begin_recording(const AllVsAllFlags& flags, const CliContext& context,
                                                     const allvsall::Problem& problem, const Inputs& in,
                                                     const Backend& backend) {
    if (!flags.project.enabled()) return nullptr;
    PairJob job;
    job.scheme = problem.scheme;
    job.options = problem.options;
    job.threads = problem.threads;
    job.streams = problem.streams;
    job.kernel = problem.kernel;
    job.gpu_memory_budget = problem.gpu_memory_budget;
    store::JobSpec spec = store::JobSpec::for_pair_job("allvsall", job, backend.info());
    spec.command_line = context.command_line;
    spec.parameters["set"] = flags.set_path;
    if (in.has_against) spec.parameters["against"] = flags.against_path;
    spec.parameters["pairs"] = std::to_string(problem.tiling.pair_count());
    spec.parameters["cells"] = std::to_string(problem.tiling.cell_count());
    spec.parameters["tile"] = std::to_string(problem.tiling.tile_size());
    if (problem.trace.min_score) spec.parameters["min_score"] = std::to_string(*problem.trace.min_score);
    if (problem.trace.min_normalised) spec.parameters["min_normalised"] = std::to_string(*problem.trace.min_normalised);
    if (problem.trace.top) spec.parameters["top"] = std::to_string(problem.trace.top);
    if (flags.output != "-") spec.parameters["pair_table"] = flags.output;
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(spec);
    try {
        recording->add_input(in.set, "set");
        if (in.has_against) recording->add_input(in.against, "against");
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    return recording;
}

// The pairs traced back (per tile and --top's), in pair-table order, as
// alignments into the project, a batch per transaction.
void record_traced(const allvsall::Problem& problem, const allvsall::ResultSpool& spool,
                   const std::map<allvsall::PairIndex, allvsall::TracedPair>& late, const std::string& device,
                   store::JobRecording& recording) {
    std::vector<Alignment> batch;
    auto flush = [&] {
        if (!batch.empty()) recording.add_alignments(batch);
        batch.clear();
    };
    auto add = [&](const allvsall::PairScore& p, const allvsall::TracedPair& t) {
        const Sequence& q = (*problem.rows)[p.i];
        const Sequence& r = (*problem.columns)[p.j];
        Alignment a;
        a.query_id = q.id;
        a.target_id = r.id;
        a.mode = problem.options.mode;
        a.score = p.score;
        a.query_begin = t.query_begin;
        a.query_end = t.query_end;
        a.target_begin = t.target_begin;
        a.target_end = t.target_end;
        a.query_length = static_cast<std::int64_t>(q.residues.size());
        a.target_length = static_cast<std::int64_t>(r.residues.size());
        a.cigar = Cigar::parse(t.cigar);
        a.stats = t.stats;
        a.device = device;
        batch.push_back(std::move(a));
        if (batch.size() >= 10000) flush();
    };
    spool.for_each([&](const allvsall::TileResult& r) {
        std::size_t t = 0;
        for (std::size_t k = 0; k < r.scores.size(); ++k) {
            while (t < r.traced.size() && r.traced[t].index < k) ++t;
            if (t < r.traced.size() && r.traced[t].index == k) add(r.scores[k], r.traced[t]);
            else if (const auto it = late.find({r.scores[k].i, r.scores[k].j}); it != late.end())
                add(r.scores[k], it->second);
        }
    });
    flush();
}

class LocalTiles : public allvsall::TileSource {
public:
    LocalTiles(std::uint64_t first, std::uint64_t count) : next_(first), count_(count) {}
    std::optional<std::uint64_t> next() override {
        if (next_ >= count_) return std::nullopt;
        return next_++;
    }
    std::optional<std::uint64_t> next_ready(bool& none_left) override {
        std::optional<std::uint64_t> tile = next();
        none_left = !tile;
        return tile;
    }

private:
    std::uint64_t next_, count_;
};

// The single GPUs of a group of them ("gpu:0,1", from --device gpu or auto on
// a host with several), else `backend` alone.
std::vector<Backend*> devices_of(Backend& backend, DeviceRegistry& registry) {
    const DeviceInfo info = backend.info();
    if (info.kind != "gpu" || info.id.rfind("gpu:", 0) != 0 || info.id.find(',') == std::string::npos)
        return {&backend};
    std::vector<Backend*> out;
    std::string_view rest(info.id);
    rest.remove_prefix(4);
    for (;;) {
        const std::size_t comma = rest.find(',');
        out.push_back(&registry.select("gpu:" + std::string(rest.substr(0, comma))));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return out;
}

// The scan scorers of a job's devices (null where the pairwise kernels
// score), each made on a thread of its own while the self-scores are
// computed: a scorer needs none of them (rank 0 does the same under mpirun).
class ScorersInMaking {
public:
    ScorersInMaking(const allvsall::Problem& problem, std::vector<Backend*> devices, const JobContext& context)
        : devices_(std::move(devices)) {
        for (Backend* device : devices_)
            made_.push_back(std::async(std::launch::async, [&problem, device, timeline = context.timeline] {
                JobContext c;
                c.timeline = timeline;  // the scorer keeps the timeline, not the context
                return make_scorer(problem, *device, c);
            }));
    }
    const std::vector<Backend*>& devices() const { return devices_; }
    // Device d's scorer; rethrows the failure to make it.
    std::unique_ptr<allvsall::TileScorer> take(std::size_t d) { return made_[d].get(); }

private:
    std::vector<Backend*> devices_;
    // Declared last: destroyed first, each waiting for its thread.
    std::vector<std::future<std::unique_ptr<allvsall::TileScorer>>> made_;
};

// Every tile the spool still lacks, on one device, or on a group of GPUs as
// one worker thread per GPU (each with its own scan scorer) taking tiles from
// one deal. Returns the summary's note on what scored them.
std::string compute_tiles(const allvsall::Problem& problem, Backend& backend, ScorersInMaking& scorers,
                          allvsall::ResultSpool& spool, allvsall::TileSink& sink, JobContext& job_context) {
    const std::uint64_t first = spool.first_tile(), count = problem.tiling.tile_count();
    if (first >= count) return {};
    const std::vector<Backend*>& devices = scorers.devices();
    if (devices.size() == 1) {
        LocalTiles tiles(first, count);
        const std::unique_ptr<allvsall::TileScorer> scorer = scorers.take(0);
        allvsall::run_tiles(problem, backend, scorer.get(), tiles, sink, job_context);
        return scorer_note(scorer.get());
    }
    allvsall::TileDeal deal(first, count, 4 * devices.size(), sink, [&] { return spool.tiles_done(); });
    std::vector<std::string> used(devices.size());
    std::exception_ptr failure;
    std::mutex failure_mutex;
    std::vector<std::thread> workers;
    for (std::size_t d = 0; d < devices.size(); ++d)
        workers.emplace_back([&, d] {
            try {
                JobContext c;
                c.cancel = job_context.cancel;
                c.timeline = job_context.timeline;
                allvsall::TileDeal::Local view(deal);
                const std::unique_ptr<allvsall::TileScorer> scorer = scorers.take(d);
                used[d] = scorer ? scorer->describe() : devices[d]->info().id + ", pairwise kernels";
                allvsall::run_tiles(problem, *devices[d], scorer.get(), view, view, c);
            } catch (...) {
                {
                    std::lock_guard lock(failure_mutex);
                    if (!failure) failure = std::current_exception();
                }
                deal.close();  // the other GPUs finish their tiles in flight and stop
            }
        });
    for (std::thread& w : workers) w.join();
    if (failure) std::rethrow_exception(failure);
    std::string note = " (scores: ";
    for (std::size_t d = 0; d < used.size(); ++d) note += (d ? "; " : "") + used[d];
    return note + ")";
}

// Rank 0's part after the tiles: --top traceback, the outputs, the summary line.
// `resumed_pairs` / `resumed_cells`: what the checkpoint held (not computed by this run).
void finish(const AllVsAllFlags& flags, const allvsall::Problem& problem, allvsall::ResultSpool& spool,
            Backend& backend, JobContext& context, double seconds, std::uint64_t resumed_pairs,
            std::uint64_t resumed_cells, const std::string& where, store::JobRecording* recording,
            const TimelineRecorder* timeline = nullptr, AtomicOutput* timeline_out = nullptr) {
    std::map<allvsall::PairIndex, allvsall::TracedPair> late;
    std::uint64_t traced = 0;
    if (problem.trace.top > 0) {
        const std::vector<allvsall::PairScore> pairs = spool.untraced_top_pairs();
        for (allvsall::TracedPair& t : allvsall::trace_pairs(problem, pairs, backend, context))
            late.emplace(allvsall::PairIndex{pairs[t.index].i, pairs[t.index].j}, std::move(t));
    }
    traced = spool.traced_done() + late.size();
    // The timeline (with the late tracebacks' kernels) is put in place with
    // the other outputs: all of them or none.
    allvsall::OutputFiles files = output_files(flags);
    if (timeline_out && timeline) {
        write_chrome_trace(timeline_out->stream(), timeline->events(), timeline->clock_source());
        files.with = timeline_out;
    }
    allvsall::write_outputs(problem, spool, late, files);
    if (recording) {
        record_traced(problem, spool, late, backend.info().id, *recording);
        recording->finish_done();
    }
    spool.remove_checkpoint();
    if (!flags.quiet) {
        const std::uint64_t pairs = problem.tiling.pair_count() - resumed_pairs;
        const double cells = double(problem.tiling.cell_count() - resumed_cells);
        char line[512];
        std::snprintf(
            line, sizeof line,
            "allvsall: %llu pairs, %.3g cells, %llu traced back, in %.2f s (%.2f GCUPS, %.0f pairs/s) on %s%s",
            static_cast<unsigned long long>(pairs), cells, static_cast<unsigned long long>(traced), seconds,
            seconds > 0 ? cells / seconds / 1e9 : 0.0, seconds > 0 ? double(pairs) / seconds : 0.0,
            backend.info().id.c_str(), where.c_str());
        std::cerr << line;
        if (resumed_pairs > 0) std::cerr << "; " << resumed_pairs << " more pairs came from the checkpoint";
        std::cerr << '\n';
    }
}

void kept_checkpoint_note(const AllVsAllFlags& flags, const allvsall::ResultSpool& spool) {
    if (!flags.checkpoint_dir.empty() && spool.tiles_done() > 0)
        std::cerr << "allvsall: the checkpoint in " << flags.checkpoint_dir << " holds " << spool.tiles_done()
                  << " tiles: run the same command with --resume to go on\n";
}

// One process's job after its setup: self-scores, the spool (or the
// checkpoint resumed), the tiles, the outputs and the summary.
void run_single_job(const AllVsAllFlags& flags, CliContext& context, allvsall::Problem& problem, Backend& backend,
                    store::JobRecording* recording) {
    TimelineRecorder timeline;
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    if (!flags.device.timeline.empty() || recording) job_context.timeline = &timeline;
    std::optional<AtomicOutput> timeline_out;
    if (!flags.device.timeline.empty()) timeline_out.emplace(flags.device.timeline);

    const auto t0 = std::chrono::steady_clock::now();
    ScorersInMaking scorers(problem, devices_of(backend, *context.registry), job_context);
    allvsall::compute_self_scores(problem, backend, job_context);
    allvsall::SpoolOptions spool_options;
    spool_options.checkpoint_dir = flags.checkpoint_dir;
    spool_options.resume = flags.resume;
    spool_options.checkpoint_every = flags.checkpoint_every;
    allvsall::ResultSpool spool(problem, spool_options);
    if (spool.first_tile() > 0)
        std::cerr << "allvsall: resuming from the checkpoint in " << flags.checkpoint_dir << ": " << spool.first_tile()
                  << " of " << problem.tiling.tile_count() << " tiles done\n";
    const std::uint64_t resumed_pairs = spool.pairs_done(), resumed_cells = spool.cells_done();
    TerminalProgress progress("allvsall");
    ProgressSink sink(spool, problem, progress, recording);
    std::string note;
    try {
        note = compute_tiles(problem, backend, scorers, spool, sink, job_context);
    } catch (...) {
        progress.finish();
        try {
            spool.checkpoint();
        } catch (const std::exception&) {
        }
        kept_checkpoint_note(flags, spool);
        throw;
    }
    progress.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (recording) recording->add_timeline(timeline.events(), timeline.clock_source());
    finish(flags, problem, spool, backend, job_context, seconds, resumed_pairs, resumed_cells, note, recording,
           &timeline, timeline_out ? &*timeline_out : nullptr);
}

int run_single(const AllVsAllFlags& flags, CliContext& context) {
    if (flags.tile_option->count() && flags.tile == 0) throw Error("--tile must be between 1 and 65536");
    if (flags.stats) throw Error("--stats: each rank's times under mpirun; one process's time is its summary line");
    const Inputs in = read_inputs(flags);
    Backend& backend = context.registry->select(flags.device.device);
    allvsall::Problem problem = build_problem(flags, in, tile_for(flags, backend));
    allvsall::check_outputs(problem, output_files(flags));
    const std::unique_ptr<store::JobRecording> recording = begin_recording(flags, context, problem, in, backend);
    try {
        run_single_job(flags, context, problem, backend, recording.get());
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    return 0;
}

#ifdef ALIGNSCOPE_WITH_MPI

// The inputs and self-scores as bytes, for the other ranks.
template <typename T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_text(std::string& out, const std::string& s) {
    put<std::uint64_t>(out, s.size());
    out += s;
}
struct ByteReader {
    const std::string& data;
    std::size_t at = 0;
    template <typename T>
    T get() {
        if (data.size() - at < sizeof(T)) throw Error("MPI: the job broadcast by rank 0 is cut short");
        T v;
        std::memcpy(&v, data.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string text() {
        const auto n = get<std::uint64_t>();
        if (data.size() - at < n) throw Error("MPI: the job broadcast by rank 0 is cut short");
        std::string s = data.substr(at, n);
        at += n;
        return s;
    }
};

void put_set(std::string& out, const SequenceSet& set) {
    put<std::int32_t>(out, static_cast<std::int32_t>(set.alphabet));
    put<std::uint64_t>(out, set.records.size());
    for (const Sequence& s : set.records) {
        put_text(out, s.id);
        put_text(out, s.residues);
    }
}
SequenceSet get_set(ByteReader& r) {
    SequenceSet set;
    set.alphabet = static_cast<AlphabetKind>(r.get<std::int32_t>());
    set.records.resize(r.get<std::uint64_t>());
    for (Sequence& s : set.records) {
        s.id = r.text();
        s.residues = r.text();
    }
    return set;
}

// Several ranks on one host share its GPUs: the k-th rank of a host takes its
// GPU k (modulo their number) when --device names all GPUs (gpu, auto).
Backend& rank_backend(const AllVsAllFlags& flags, CliContext& context, const mpi::World& world) {
    std::string device = flags.device.device;
    if (device == "gpu" || device == "auto") {
        int gpus = 0;
        for (const DeviceInfo& d : context.registry->devices())
            if (d.kind == "gpu" && d.available && d.id.rfind("gpu:", 0) == 0) ++gpus;
        if (gpus > 0) device = "gpu:" + std::to_string(world.local_rank() % gpus);
    }
    return context.registry->select(device);
}

// What every rank holds once rank 0 has sent the job.
struct RankJob {
    Inputs in;
    std::optional<allvsall::Problem> problem;
    Backend* backend = nullptr;
};

// Rank 0's job goes out in two broadcasts, each opening with a byte that says
// whether rank 0 got that far (else it alone says why and every rank ends):
// the inputs first, so that the other ranks make their scorers while rank 0
// computes the self-scores, then the self-scores.
bool received(const std::string& bytes) { return !bytes.empty() && bytes[0] != '\0'; }

// Rank 0: reads and checks everything and sends the inputs.
void share_inputs(const AllVsAllFlags& flags, CliContext& context, const mpi::World& world, RankJob& job) {
    std::string bytes;
    try {
        if (flags.tile_option->count() && flags.tile == 0) throw Error("--tile must be between 1 and 65536");
        if (!flags.device.timeline.empty())
            throw Error("--timeline: one process's kernels only; run without mpirun to record a timeline");
        job.in = read_inputs(flags);
        job.backend = &rank_backend(flags, context, world);
        job.problem.emplace(build_problem(flags, job.in, tile_for(flags, *job.backend)));
        allvsall::check_outputs(*job.problem, output_files(flags));
        bytes.assign(1, '\1');
        put<std::uint32_t>(bytes, job.problem->tiling.tile_size());
        put_set(bytes, job.in.set);
        put<std::uint8_t>(bytes, job.in.has_against ? 1 : 0);
        if (job.in.has_against) put_set(bytes, job.in.against);
    } catch (...) {
        bytes.assign(1, '\0');
        world.broadcast(bytes);
        throw;
    }
    world.broadcast(bytes);
}

// Rank 0: computes the self-scores and sends them.
void share_self_scores(const mpi::World& world, RankJob& job, JobContext& job_context) {
    std::string bytes;
    try {
        allvsall::compute_self_scores(*job.problem, *job.backend, job_context);
        bytes.assign(1, '\1');
        for (std::int64_t s : job.problem->row_self) put(bytes, s);
        for (std::int64_t s : job.problem->column_self) put(bytes, s);
    } catch (...) {
        bytes.assign(1, '\0');
        world.broadcast(bytes);
        throw;
    }
    world.broadcast(bytes);
}

// Ranks 1..N-1: the inputs from rank 0's bytes.
void decode_inputs(const AllVsAllFlags& flags, const std::string& bytes, RankJob& job) {
    ByteReader r{bytes, 1};
    const auto tile = r.get<std::uint32_t>();
    job.in.set = get_set(r);
    job.in.has_against = r.get<std::uint8_t>() != 0;
    if (job.in.has_against) job.in.against = get_set(r);
    job.problem.emplace(build_problem(flags, job.in, tile));
}

// Ranks 1..N-1: the self-scores from rank 0's bytes.
void decode_self_scores(const std::string& bytes, RankJob& job) {
    ByteReader r{bytes, 1};
    allvsall::Problem& problem = *job.problem;
    problem.row_self.resize(job.in.set.records.size());
    for (std::int64_t& s : problem.row_self) s = r.get<std::int64_t>();
    problem.column_self.resize(problem.triangle() ? job.in.set.records.size() : job.in.against.records.size());
    for (std::int64_t& s : problem.column_self) s = r.get<std::int64_t>();
}

using Clock = std::chrono::steady_clock;

// Ranks 1..N-1: the device made ready while rank 0 reads the inputs, the
// scorer made while it computes the self-scores, then tiles from rank 0 and
// results back until told to stop. A failure here is sent to rank 0 (which
// names this rank and ends the run) once both broadcasts are in. Returns 2
// when rank 0 failed before the tiles (it says why).
int run_worker_rank(const AllVsAllFlags& flags, CliContext& context, const mpi::World& world, RankJob& job,
                    JobContext& job_context) {
    std::string error;
    auto failed = [&](const std::exception& e) {
        if (error.empty()) error = e.what();
    };
    try {
        job.backend = &rank_backend(flags, context, world);
        job.backend->warm_up();
    } catch (const std::exception& e) {
        failed(e);
    }
    std::string bytes;
    world.broadcast(bytes);
    if (!received(bytes)) return 2;
    const Clock::time_point start = Clock::now();
    std::unique_ptr<allvsall::TileScorer> scorer;
    try {
        if (error.empty()) {
            decode_inputs(flags, bytes, job);
            scorer = make_scorer(*job.problem, *job.backend, job_context);
        }
    } catch (const std::exception& e) {
        failed(e);
    }
    world.broadcast(bytes);
    if (!received(bytes)) return 2;
    // A rank that runs one tile at a time asks for the next while it runs one.
    mpi::RemoteTiles remote(world, scorer == nullptr);
    mpi::RankTimes times;
    try {
        if (!error.empty()) throw Error(error);
        decode_self_scores(bytes, job);
        times.setup = std::chrono::duration<double>(Clock::now() - start).count();
        mpi::TimedTiles timed(remote, remote, start, times);
        allvsall::run_tiles(*job.problem, *job.backend, scorer.get(), timed, timed, job_context);
        remote.flush();
    } catch (const Cancelled&) {
        std::_Exit(130);  // rank 0 keeps the checkpoint; mpirun ends the run
    } catch (const std::exception& e) {
        remote.report_error(e.what());
        // Rank 0 names this rank and ends the run.
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    mpi::gather_times(world, times);
    return 0;
}

// Rank 0's failure after the job is shared: the checkpoint kept, the message
// (none for Ctrl-C or mpirun ending the run: mpirun names a rank that died),
// and every rank ended.
[[noreturn]] void end_run(const AllVsAllFlags& flags, const mpi::World& world, const std::exception& e,
                          std::optional<allvsall::ResultSpool>& spool, store::JobRecording* recording) {
    const bool cancelled = dynamic_cast<const Cancelled*>(&e) != nullptr;
    try {
        spool->checkpoint();
    } catch (const std::exception&) {
    }
    std::cerr << "alignscope-cli: " << (cancelled ? std::string("stopped") : std::string("error: ") + e.what()) << '\n';
    ProjectFlag::record_failure(recording);
    kept_checkpoint_note(flags, *spool);
    spool.reset();
    if (cancelled) std::_Exit(130);
    world.abort(2);
}

// Rank 0's scorer, made on a thread of its own while rank 0 computes the
// self-scores (it needs none of them): the scorer (null: the backend's
// kernels) or the failure to make it.
struct LocalScorer {
    std::unique_ptr<allvsall::TileScorer> scorer;
    std::exception_ptr error;
};

// What rank 0's part of the tiles gives back: the scorer's summary note, its
// own times and its dealing thread's.
struct RankZero {
    std::string note;
    mpi::RankTimes times;
    mpi::DealTimes dealing;
};

// Rank 0 after the job is shared: the spool (or the checkpoint resumed), its
// own worker thread, the dealing of tiles to every rank, and on failure the
// checkpoint kept and the run ended. `start`: when the self-scores began.
RankZero deal_and_collect(const AllVsAllFlags& flags, const mpi::World& world, RankJob& job,
                          std::optional<allvsall::ResultSpool>& spool, JobContext& job_context,
                          store::JobRecording* recording, LocalScorer& made, Clock::time_point start) {
    const allvsall::Problem& problem = *job.problem;
    TerminalProgress progress("allvsall");
    ProgressSink sink(*spool, problem, progress, recording);
    const std::uint64_t window = 4 * static_cast<std::uint64_t>(world.size());
    allvsall::TileDeal deal(spool->first_tile(), problem.tiling.tile_count(), window, sink,
                            [&] { return spool->tiles_done(); });
    // Rank 0 computes too, on a thread of its own; this thread alone talks MPI.
    CancellationToken stop_local;
    JobContext local_context;
    local_context.cancel = &stop_local;
    std::atomic<bool> local_done{false};
    std::exception_ptr local_error;
    RankZero out;
    std::thread local([&] {
        try {
            allvsall::TileDeal::Local view(deal);
            if (made.error) std::rethrow_exception(made.error);
            out.note = scorer_note(made.scorer.get());
            out.times.setup = std::chrono::duration<double>(Clock::now() - start).count();  // self-scores too
            mpi::TimedTiles timed(view, view, start, out.times);
            allvsall::run_tiles(problem, *job.backend, made.scorer.get(), timed, timed, local_context);
            made.scorer.reset();  // its device memory free for the traceback after the tiles
        } catch (const Cancelled&) {
            local_error = std::current_exception();
        } catch (const std::exception& e) {
            local_error = std::make_exception_ptr(Error("rank 0 on " + world.host(0) + ": " + e.what()));
        } catch (...) {
            local_error = std::current_exception();
        }
        local_done.store(true, std::memory_order_release);
    });
    try {
        out.dealing = mpi::deal_tiles(
            world, deal,
            [&] {
                if (!local_done.load(std::memory_order_acquire)) return true;
                if (local_error) std::rethrow_exception(local_error);
                return false;
            },
            job_context.cancel);
        local.join();
    } catch (const std::exception& e) {
        stop_local.cancel();
        deal.close();
        if (local.joinable()) local.join();
        progress.finish();
        end_run(flags, world, e, spool, recording);
    }
    progress.finish();
    return out;
}

// --stats under mpirun: a line per rank, and rank 0's dealing thread.
void print_rank_times(const mpi::World& world, const std::vector<mpi::RankTimes>& ranks,
                      const mpi::DealTimes& dealing) {
    for (std::size_t r = 0; r < ranks.size(); ++r)
        std::cerr << "allvsall: " << mpi::describe(ranks[r], static_cast<int>(r), world.host(static_cast<int>(r)))
                  << '\n';
    char line[200];
    std::snprintf(line, sizeof line,
                  "allvsall: rank 0's dealing thread: %llu messages, %.3f s taking in the other ranks' results",
                  static_cast<unsigned long long>(dealing.messages), dealing.receiving);
    std::cerr << line << '\n';
}

int run_distributed(const AllVsAllFlags& flags, CliContext& context) {
    mpi::World world;
    if (world.size() < 2) return run_single(flags, context);
    RankJob job;
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    if (world.rank() != 0) return run_worker_rank(flags, context, world, job, job_context);
    share_inputs(flags, context, world, job);
    // Timed from here, as one process is: the inputs read, the self-scores next.
    const Clock::time_point t0 = Clock::now();
    LocalScorer made;
    std::thread maker([&] {
        try {
            JobContext c;
            made.scorer = make_scorer(*job.problem, *job.backend, c);
        } catch (...) {
            made.error = std::current_exception();  // rank 0's worker reports it once the tiles begin
        }
    });
    try {
        share_self_scores(world, job, job_context);
    } catch (...) {
        maker.join();
        throw;
    }
    maker.join();
    allvsall::SpoolOptions spool_options;
    spool_options.checkpoint_dir = flags.checkpoint_dir;
    spool_options.resume = flags.resume;
    spool_options.checkpoint_every = flags.checkpoint_every;
    std::optional<allvsall::ResultSpool> spool;
    try {
        spool.emplace(*job.problem, spool_options);
    } catch (const std::exception& e) {
        std::cerr << "alignscope-cli: error: " << e.what() << '\n';
        world.abort(2);
    }
    if (spool->first_tile() > 0)
        std::cerr << "allvsall: resuming from the checkpoint in " << flags.checkpoint_dir << ": " << spool->first_tile()
                  << " of " << job.problem->tiling.tile_count() << " tiles done\n";
    const std::uint64_t resumed_pairs = spool->pairs_done(), resumed_cells = spool->cells_done();
    std::unique_ptr<store::JobRecording> recording;
    try {
        recording = begin_recording(flags, context, *job.problem, job.in, *job.backend);
    } catch (const std::exception& e) {
        std::cerr << "alignscope-cli: error: " << e.what() << '\n';
        world.abort(2);
    }
    const RankZero zero = deal_and_collect(flags, world, job, spool, job_context, recording.get(), made, t0);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::vector<mpi::RankTimes> ranks = mpi::gather_times(world, zero.times);
    try {
        finish(flags, *job.problem, *spool, *job.backend, job_context, seconds, resumed_pairs, resumed_cells,
               " (" + std::to_string(world.size()) + " ranks)" + zero.note, recording.get());
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    if (flags.stats) print_rank_times(world, ranks, zero.dealing);
    return 0;
}

#endif

int run_allvsall(const AllVsAllFlags& flags, CliContext& context) {
    refuse_overlapping_files({{"SET", flags.set_path},
                              {"--against", flags.against_path},
                              {"--matrix", flags.scoring.matrix}},
                             {{"-o", flags.output},
                              {"--matrix-out", flags.matrix_out},
                              {"--clusters", flags.clusters},
                              {"--timeline", flags.device.timeline},
                              {"--checkpoint", flags.checkpoint_dir},
                              {"--project", flags.project.path}});
    if (ranks_from_environment() > 1) {
#ifdef ALIGNSCOPE_WITH_MPI
        return run_distributed(flags, context);
#else
        throw Error(
            "this alignscope-cli was built without MPI (no libopenmpi-dev, or ALIGNSCOPE_MPI=OFF): it "
            "cannot share work under mpirun; rebuild with MPI or run it once without mpirun");
#endif
    }
    return run_single(flags, context);
}

}  // namespace

void add_allvsall_command(CLI::App& app, CliContext& context) {
    auto flags = std::make_shared<AllVsAllFlags>();
    CLI::App* command = app.add_subcommand(
        "allvsall", "Align every pair of a set (or every pair of two sets), tracing back only the pairs that pass");
    command->add_option("set", flags->set_path, "FASTA/FASTQ file (plain or gzip): every pair i < j of its records")
        ->required();
    command->add_option("--against", flags->against_path,
                        "Second FASTA/FASTQ file: every record of SET against every record of this one instead");
    command->add_option("--format", flags->format, "Pair table format: tsv")->capture_default_str();
    command->add_option("-o,--output", flags->output, "Pair table file [default: standard output]");
    flags->scoring.add_to(*command);
    flags->device.add_to(*command, "auto");
    command->add_option("--min-score", flags->min_score, "Trace back pairs scoring at least S");
    command->add_option("--min-normalised", flags->min_normalised,
                        "Trace back pairs whose score / min(self-score of each) is at least X");
    command->add_option("--top", flags->top, "Trace back every record's N best-scoring partners");
    command
        ->add_option("--distance", flags->distance,
                     "Matrix and clusters from: score (1 - normalised score) or identity (1 - identity of the "
                     "alignment; traces every pair)")
        ->capture_default_str();
    command->add_option("--matrix-out", flags->matrix_out,
                        "Distance matrix: FILE.phy (PHYLIP square; one set only) or FILE.csv");
    command->add_option("--clusters", flags->clusters,
                        "Clusters TSV: single linkage and greedy centroid at --cluster-threshold (one set only)");
    command
        ->add_option("--cluster-threshold", flags->cluster_threshold,
                     "Similarity (normalised score, or identity with --distance identity) at which records cluster")
        ->capture_default_str();
    flags->tile_option =
        command->add_option("--tile", flags->tile,
                            "Records per tile side; tiles are dealt and checkpointed whole and set the row order "
                            "[default: 512 on a GPU, 128 on CPUs]");
    command->add_option("--checkpoint", flags->checkpoint_dir,
                        "Keep the results in DIR (created when missing) so that a killed run can go on with "
                        "--resume; removed after a successful run");
    command
        ->add_option("--checkpoint-every", flags->checkpoint_every, "Seconds between checkpoints, 0 = after every tile")
        ->capture_default_str();
    command->add_flag("--resume", flags->resume, "Go on from the checkpoint in --checkpoint DIR");
    command->add_flag("-q,--quiet", flags->quiet, "No summary line on stderr");
    command->add_flag("--stats", flags->stats,
                      "Under mpirun: print on stderr where each rank's time went (set-up, first tile, tiles, last "
                      "result, idle waiting for tiles, handing over results) and rank 0's dealing");
    flags->project.add_to(*command);
    command->callback(
        [flags, &context] { context.action = [flags, &context] { return run_allvsall(*flags, context); }; });
}

}  // namespace alignscope::cli
