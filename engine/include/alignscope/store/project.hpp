// A project: one SQLite file (extension .alsproj) holding a user's inputs, jobs
// and results, shared by the GUI and the CLI, safe against crashes (a killed job
// shows as interrupted) and against two processes writing at once.
//
// A Project is one connection, used by one thread at a time. Jobs are recorded
// through a JobRecording (job_recording.hpp), which opens a connection of its
// own, so a worker thread records while the GUI thread reads; the reader sees
// the new rows by polling changed_since().
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_spec.hpp>
#include <alignscope/store/results.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::store {

class JobRecording;
struct RecordingOptions;

enum class InputKind { SequenceSet, Profile };
std::string_view to_string(InputKind kind);  // "sequences", "profile"

// How an input file compares with what was recorded (see Project::inputs).
enum class InputStatus {
    NotChecked,  // embedded inputs are not re-read on open (the project holds them)
    Unchanged,   // same size and SHA-256 as recorded
    Changed,     // the file is there but its content differs
    Missing,     // no file at the recorded path
};
std::string_view to_string(InputStatus status);

struct InputInfo {
    std::int64_t id = 0;
    InputKind kind = InputKind::SequenceSet;
    std::string path;  // absolute path when recorded ("-" for standard input)
    std::uint64_t size_bytes = 0;
    std::int64_t mtime_ns = 0;        // modification time, ns since the Unix epoch
    std::string sha256;               // of the file's bytes (of the records for standard input)
    std::string alphabet;             // "dna", "rna", "protein"
    std::uint64_t record_count = 0;   // sequences, or profile models
    std::uint64_t residue_count = 0;  // residues, or profile match states
    bool embedded = false;            // the sequences (or profile file) are stored in the project
    std::int64_t added_ms = 0;        // ms since the Unix epoch
    InputStatus status = InputStatus::NotChecked;
};

struct JobInput {
    std::int64_t input_id = 0;
    std::string role;  // "query", "target", "database", "profile", ...
    bool operator==(const JobInput&) const = default;
};

struct JobInfo {
    std::int64_t id = 0;
    JobSpec spec;
    JobState state = JobState::Queued;
    std::int64_t created_ms = 0;  // ms since the Unix epoch; 0 = not yet
    std::int64_t started_ms = 0;
    std::int64_t ended_ms = 0;
    std::string error;           // why it failed
    Progress progress;           // last progress recorded
    std::int64_t owner_pid = 0;  // the process that ran it, on owner_host
    std::string owner_host;
    std::string clock_source;  // of its timeline events
    ResultCounts counts;
    std::vector<JobInput> inputs;
};

// A workbench analysis kept whole (schema version 4): a profile search or an
// all-against-all matrix. `parameters` is a JSON object (what was asked);
// `results` the results as the workbench wrote them (JSON text).
struct AnalysisInfo {
    std::int64_t id = 0;
    std::string kind;   // "profile_search", "allvsall"
    std::string title;  // "globins4.hmm against globins45.fa"
    std::int64_t created_ms = 0;
    std::string parameters;
};

struct ProjectOptions {
    bool read_only = false;          // never write (list, show, export); see Project::read_only()
    bool create_if_missing = false;  // make a new project when there is no file
    bool verify_inputs = true;       // re-check referenced inputs by SHA-256 on open
    // Sequence sets (and profile files) up to this many bytes are stored in the
    // project, so it opens where the files are gone; larger ones are referenced.
    std::uint64_t embed_limit_bytes = std::uint64_t{64} << 20;
    int busy_timeout_ms = 10'000;  // how long one attempt waits for another writer
    // Called (once per wait) when a write has waited a second for another
    // process's lock, with a line saying who holds it (the live jobs' pid and
    // host, when a job does) and how long the write will wait before it gives up.
    std::function<void(const std::string&)> on_wait;
    // SQLite's max_page_count for this connection: 0 = no limit. A quota; the
    // tests use it to make the "disk" fill up.
    std::uint64_t max_page_count = 0;
};

// What `check` found: problems (damage, dangling rows, changed inputs) and notes.
struct CheckReport {
    std::vector<std::string> problems;
    std::vector<std::string> notes;
    bool ok() const { return problems.empty(); }
};

class Project {
public:
    // The schema this build writes; files with a higher PRAGMA user_version are
    // refused, lower ones are migrated forward on open (unless read-only).
    static constexpr int schema_version = 4;
    static constexpr std::string_view file_extension = ".alsproj";

    // Opens (or with create_if_missing creates) a project. On a writable open it
    // migrates an older schema and marks jobs whose owner died as interrupted;
    // with verify_inputs it re-checks referenced input files. Throws Error
    // naming the file when it is missing, not an SQLite database, another
    // program's database, from a newer AlignScope, damaged, or (unless
    // read_only) not writable. A refused file is left exactly as it was.
    explicit Project(const std::string& path, ProjectOptions options = {});
    ~Project();
    Project(Project&&) noexcept;
    Project& operator=(Project&&) noexcept;

    const std::string& path() const;
    bool read_only() const;
    int found_schema_version() const;  // the file's version before any migration

    // Inputs. Adding the same file (same path, same SHA-256) again returns the
    // existing id. The set's path is hashed from disk ("-" hashes the records).
    std::int64_t add_sequence_set(const SequenceSet& set);
    std::int64_t add_profile(const std::string& path, AlphabetKind alphabet, std::uint64_t model_count,
                             std::uint64_t match_states);
    std::vector<InputInfo> inputs() const;
    InputInfo input(std::int64_t id) const;
    // The records of a sequence-set input: from the project when embedded, else
    // from the file after checking its SHA-256. Throws Error when the file is
    // missing or changed.
    std::vector<Sequence> input_sequences(std::int64_t id) const;
    // The bytes of a profile input's file (embedded copy or the verified file).
    std::string input_content(std::int64_t id) const;
    // Removes an input (and its embedded records) that no job used. Throws
    // Error naming the jobs that used it (delete those first), or when there
    // is no such input.
    void delete_input(std::int64_t id);

    // Settings kept with the project (the workbench keeps its Job panel's
    // here): text values under keys of the caller's choosing. nullopt for a
    // key never set; set_setting replaces a value (Error when read-only).
    std::optional<std::string> setting(std::string_view key) const;
    void set_setting(std::string_view key, std::string_view value);

    // Analyses, oldest first (without their results), one's results, adding
    // and deleting. add_analysis throws Error for an unknown kind or
    // parameters that are not a JSON object; analysis_results and
    // delete_analysis throw Error when there is no such analysis.
    std::vector<AnalysisInfo> analyses() const;
    std::string analysis_results(std::int64_t id) const;
    std::int64_t add_analysis(const std::string& kind, const std::string& title, const std::string& parameters,
                              const std::string& results);
    void delete_analysis(std::int64_t id);

    // Jobs, oldest first. A queued or running job whose owner is gone is
    // reported as interrupted even before mark_interrupted_jobs() writes it.
    std::vector<JobInfo> jobs() const;
    JobInfo job(std::int64_t id) const;  // throws Error when there is no such job
    // For a view that keeps the job list and catches up after each change
    // instead of reading it all again: the ids of the jobs above `after_id`,
    // oldest first (ids only grow, so a new job comes above every job seen
    // before), and how many jobs there are (fewer than the view holds plus
    // the new ones: some were deleted). Neither reads a job's spec.
    std::vector<std::int64_t> job_ids(std::int64_t after_id = 0) const;
    std::int64_t job_count() const;
    // Starts recording a new job through its own connection (see JobRecording).
    std::unique_ptr<JobRecording> begin_job(const JobSpec& spec) const;
    std::unique_ptr<JobRecording> begin_job(const JobSpec& spec, const RecordingOptions& options) const;
    // Deletes a job and all its results. Throws Error for a job still running.
    void delete_job(std::int64_t id);
    // Writes `interrupted` for every queued/running job whose owner lock is
    // free; returns how many. Done on every writable open; the GUI may call it
    // now and then to notice a CLI run that died.
    int mark_interrupted_jobs();

    // Results in pages (see Page): rows [from, from + limit).
    Page<Alignment> alignments(std::int64_t job_id, std::int64_t from = 0, int limit = 200) const;
    Page<Hit> hits(std::int64_t job_id, std::int64_t from = 0, int limit = 200) const;
    Page<TimelineEvent> timeline(std::int64_t job_id, std::int64_t from = 0, int limit = 1000) const;
    Page<LongAlignmentSummary> long_alignments(std::int64_t job_id, std::int64_t from = 0, int limit = 200) const;
    Page<BenchPoint> bench_points(std::int64_t job_id, std::int64_t from = 0, int limit = 10'000) const;
    std::vector<Heatmap> heatmaps(std::int64_t job_id) const;
    // The pipeline statistics of a long-pair job, one per pair it aligned.
    std::vector<LongPairStats> long_pair_stats(std::int64_t job_id) const;
    // The stored alignment of a search job's hit number `hit_ordinal` (its row
    // in hits()): the alignment row with the hit's query, target, score and
    // coordinates; nullopt when the job holds none for it (a search without
    // traceback, or a hit that got no alignment). Searches store the alignments
    // of their hits in hit order, one per hit that has one, so the row is
    // sought among alignments [ordinal - (hits - alignments), ordinal] first:
    // one read when every hit has its alignment. Only a hit not found there
    // costs a read of the job's other alignment rows. Throws Error when the job
    // has no such hit.
    std::optional<Alignment> hit_alignment(std::int64_t job_id, std::int64_t hit_ordinal) const;

    // PRAGMA integrity_check and foreign_key_check, result counters against the
    // rows, and every input file against its checksum.
    CheckReport check();
    // Rebuilds the file without free pages; returns the bytes saved.
    std::int64_t vacuum();
    // Save As: writes a consistent copy of the project to `path` through SQLite
    // (VACUUM INTO), so commits still in the write-ahead log are included and a
    // job recording meanwhile cannot tear it. The copy is written to a
    // temporary file beside `path`, synced and renamed over it: `path` holds
    // either what it held before or the whole copy. An existing file at `path`
    // is replaced (with any stale -wal/-shm beside it), but the copy refuses,
    // with Error, to write over this project itself or over a database that
    // some connection (of this or another process) has open. Works on a
    // read-only project too; this project stays open and unchanged.
    void copy_to(const std::string& path) const;

    // Cheap change detection for polling views: SQLite's data_version, which
    // moves when another connection (another process, or a JobRecording in
    // this one) commits. changed_since(seen) says whether it moved since `seen`
    // and updates `seen`; start with seen = data_version().
    std::int64_t data_version() const;
    bool changed_since(std::int64_t& seen) const;

    // The sidecar file whose byte locks tell live jobs from dead ones:
    // "<project>-lock" next to the project. Never delete it while jobs run.
    static std::string lock_path(const std::string& project_path);

private:
    friend class JobRecording;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace alignscope::store
