// Opening projects (checks, migration, interrupted-job detection), the job list,
// deletion, and maintenance (check, vacuum, copy, change polling).
#include "project_impl.hpp"
#include "record_columns.hpp"
#include "schema.hpp"
#include "sha256.hpp"

#include <alignscope/error.hpp>
#include <alignscope/store/job_recording.hpp>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

namespace alignscope::store {
namespace fs = std::filesystem;

std::string Project::Impl::waiting_for() {
    // Live jobs of other processes: the likely holders of the write lock.
    std::string holders;
    try {
        auto row = db->prepare(
            "SELECT id, command, owner_pid, owner_host FROM jobs WHERE state IN ('running', 'queued') ORDER BY id");
        while (row.step()) {
            const std::int64_t id = row.int64(0);
            if (row.int64(2) == static_cast<std::int64_t>(::getpid()) || !probe->held(id)) continue;
            holders += std::string(holders.empty() ? "" : "; ") + "job " + std::to_string(id) + ", " + row.text(1) +
                       ", pid " + std::to_string(row.int64(2)) + " on " + row.text(3);
        }
    } catch (const std::exception&) {
        // Not even readable now (an exclusive lock): say what is known.
    }
    return path + " is locked by another process (" +
           (holders.empty() ? std::string("no AlignScope job is running there: a program such as the sqlite3 shell "
                                          "may hold it")
                            : "running there: " + holders) +
           "); waiting up to " + std::to_string((db->longest_wait_ms() + 500) / 1000) + " s for it";
}

namespace {

constexpr std::array<char, 16> kSqliteHeader = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                                'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// The first 16 bytes of a file, read through SQLite's own file layer, or
// nullopt when it cannot be opened. Not with an ifstream: POSIX record locks
// belong to the process, and any close() of the file drops all of them, so a
// plain open and close here would silently release the locks of every
// connection this process holds on the project; another process could then
// checkpoint and delete the write-ahead log under them. SQLite's unix VFS
// keeps such a descriptor open until the locks are released. Opening a
// connection reads nothing and creates no -wal or -shm file.
std::optional<std::array<char, 16>> file_header(const std::string& path, std::string* why = nullptr) {
    sqlite3* db = nullptr;
    std::optional<std::array<char, 16>> header;
    const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc == SQLITE_OK) {
        sqlite3_file* file = nullptr;
        if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK && file && file->pMethods) {
            std::array<char, 16> bytes{};
            // A file shorter than the header reads as a short read: not SQLite.
            header = file->pMethods->xRead(file, bytes.data(), int(bytes.size()), 0) == SQLITE_OK
                         ? bytes
                         : std::array<char, 16>{};
        }
    } else if (why) {
        *why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    }
    sqlite3_close_v2(db);
    return header;
}

// Refuses a file that is not an SQLite database before SQLite reads it, so
// nothing (not even a -wal or -shm file) is created next to someone's PNG.
void check_sqlite_header(const std::string& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw Error("cannot open project " + path + ": " + ec.message());
    if (size == 0) return;  // an empty file becomes a new project
    std::string why;
    const auto header = file_header(path, &why);
    if (!header) throw Error("cannot open project " + path + ": " + (why.empty() ? std::strerror(errno) : why));
    if (*header != kSqliteHeader) throw Error(path + " is not an AlignScope project: it is not an SQLite database");
}

JobInfo read_job(const sqlite::Statement& row, const std::string& path) {
    JobInfo job = columns::read(entity::job_columns, row);
    job.spec = JobSpec::from_json(row.text(entity::kJobSpecColumn), path + ": " + job_name(job.id));
    return job;
}

// The result tables and the jobs column counting each one's rows.
struct ResultTable {
    const char* table;
    const char* count_column;
};
constexpr std::array<ResultTable, 7> kResultTables = {{
    {"alignments", "alignment_count"},
    {"hits", "hit_count"},
    {"long_alignments", "long_alignment_count"},
    {"heatmaps", "heatmap_count"},
    {"timeline_events", "timeline_event_count"},
    {"bench_points", "bench_point_count"},
    {"long_pair_stats", "long_pair_stats_count"},
}};

}  // namespace

std::string Project::lock_path(const std::string& project_path) { return project_path + "-lock"; }

JobState Project::Impl::effective_state(std::int64_t job_id, JobState stored) {
    if (is_final(stored) || probe->held(job_id)) return stored;
    // The owner commits its final state before it lets go of the lock, so a
    // second look tells a job that just finished from one whose owner died.
    auto again = db->prepare("SELECT state FROM jobs WHERE id = ?");
    again.bind(1, job_id);
    if (!again.step()) return JobState::Interrupted;
    const JobState now = parse_job_state(again.text(0));
    return is_final(now) ? now : JobState::Interrupted;
}

void Project::Impl::require_writable(std::string_view what) const {
    if (options.read_only || db->read_only())
        throw Error(path + ": the project was opened read-only; cannot " + std::string(what));
}

Project::Project(const std::string& path, ProjectOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    impl_->options = options;
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (!exists) {
        if (!options.create_if_missing || options.read_only) throw Error("no project " + path + " (no such file)");
        const fs::path parent = fs::absolute(path, ec).parent_path();
        if (!fs::is_directory(parent, ec))
            throw Error("cannot create project " + path + ": the folder " + parent.string() + " does not exist");
    } else {
        if (fs::is_directory(path, ec)) throw Error(path + " is a folder, not a project file");
        check_sqlite_header(path);
        if (!options.read_only && ::access(path.c_str(), W_OK) != 0)
            throw Error(path +
                        ": the project is read-only (file permissions); open it read-only to look at it, "
                        "or make it writable to record jobs");
        const fs::path folder = fs::absolute(path, ec).parent_path();
        if (!options.read_only && ::access(folder.c_str(), W_OK) != 0)
            throw Error(path + ": the project is read-only: its folder " + folder.string() +
                        " is not writable, and a project writes its -wal, -shm and -lock files beside it; open it "
                        "read-only to look at it");
    }

    using sqlite::OpenMode;
    OpenMode mode = options.read_only ? OpenMode::ReadOnly : exists ? OpenMode::ReadWrite : OpenMode::ReadWriteCreate;
    if (options.read_only) {
        // A WAL project is read through its -shm file; in a folder where that
        // cannot be created (read-only media) and where therefore no writer
        // can be at work, read the file as immutable instead.
        const fs::path folder = fs::absolute(path, ec).parent_path();
        if (::access(folder.c_str(), W_OK) != 0 && !fs::exists(path + "-shm", ec) && !fs::exists(path + "-wal", ec))
            mode = OpenMode::ReadOnlyImmutable;
    }
    impl_->db = std::make_unique<sqlite::Connection>(path, mode, options.busy_timeout_ms);
    // The first read (which maps SQLite's -shm index beside a WAL project).
    std::int64_t application_id = 0;
    try {
        application_id = impl_->db->query_int("PRAGMA application_id");
    } catch (const sqlite::DiskFull& full) {
        // No room for that index: a reader then takes the file for itself and
        // keeps the index in memory, so a project can still be read (and
        // exported elsewhere) from a full disk while nothing else uses it.
        if (mode != OpenMode::ReadOnly) throw;
        impl_->db.reset();
        try {
            impl_->db = std::make_unique<sqlite::Connection>(path, OpenMode::ReadOnlyPrivate, 0);
            application_id = impl_->db->query_int("PRAGMA application_id");
        } catch (const Error&) {
            throw full;  // another process has it open: the full disk is the news
        }
    }
    auto& db = *impl_->db;
    impl_->lock_path = lock_path(fs::weakly_canonical(path, ec).string());
    if (ec) impl_->lock_path = lock_path(path);
    impl_->probe = std::make_unique<OwnerProbe>(impl_->lock_path);
    if (options.on_wait) {
        Impl* impl = impl_.get();
        db.set_wait_notice([impl] { impl->options.on_wait(impl->waiting_for()); });
    }

    // Identify the file before changing anything about it.
    const int version = static_cast<int>(db.query_int("PRAGMA user_version"));
    const std::int64_t objects = db.query_int("SELECT count(*) FROM sqlite_schema");
    impl_->found_version = version;
    const bool blank = application_id == 0 && version == 0 && objects == 0;
    if (!blank && application_id != schema::application_id)
        throw Error(path + " is an SQLite database of another program, not an AlignScope project");
    if (version > schema::latest_version())
        throw Error(path + " was written by a newer AlignScope (project schema version " + std::to_string(version) +
                    "; this build reads versions up to " + std::to_string(schema::latest_version()) +
                    "): update AlignScope to open it");

    // Only a command that may create a project makes one of an empty file:
    // `project FILE list` on a file that was never a project leaves it as it is.
    if (blank && !options.create_if_missing)
        throw Error(path + (fs::file_size(path, ec) == 0 ? " is an empty file" : " is an empty database") +
                    ", not an AlignScope project (a command run with --project FILE makes one)");
    if (options.read_only) {
        if (version < schema::latest_version())
            throw Error(path + " uses project schema version " + std::to_string(version) +
                        "; open it once with write access to upgrade it to version " +
                        std::to_string(schema::latest_version()));
    } else {
        // WAL: readers never block the writer and a killed writer leaves the
        // file consistent. NORMAL sync is durable against process death (the
        // WAL is in the OS cache); only a power cut can lose the last commits.
        {
            auto journal = db.prepare("PRAGMA journal_mode = WAL");
            if (!journal.step() || journal.text(0) != "wal")
                throw Error(path + ": cannot switch the project to write-ahead logging (is the folder writable?)");
        }
        db.execute("PRAGMA synchronous = NORMAL");
        db.execute("PRAGMA foreign_keys = ON");
        // Up to 64 MiB of page cache (used only when needed): a batch of a
        // million rows then stays in memory until its commit instead of
        // spilling into the WAL halfway.
        db.execute("PRAGMA cache_size = -65536");
        if (options.max_page_count > 0) db.execute("PRAGMA max_page_count = " + std::to_string(options.max_page_count));
        if (version < schema::latest_version()) schema::migrate(db, schema::latest_version());
        mark_interrupted_jobs();
    }
    if (options.verify_inputs) {
        for (const InputInfo& info : inputs()) {
            if (info.embedded || info.path == "-") continue;
            InputStatus status = InputStatus::Missing;
            if (fs::exists(info.path, ec)) {
                const auto size = fs::file_size(info.path, ec);
                status = !ec && size == info.size_bytes && sha256_file(info.path) == info.sha256
                             ? InputStatus::Unchanged
                             : InputStatus::Changed;
            }
            impl_->input_status[info.id] = status;
        }
    }
}

Project::~Project() = default;
Project::Project(Project&&) noexcept = default;
Project& Project::operator=(Project&&) noexcept = default;

const std::string& Project::path() const { return impl_->path; }

bool Project::read_only() const { return impl_->options.read_only || impl_->db->read_only(); }

int Project::found_schema_version() const { return impl_->found_version; }

std::vector<JobInfo> Project::jobs() const {
    auto& db = *impl_->db;
    std::vector<JobInfo> result;
    std::map<std::int64_t, std::size_t> index;
    {
        auto rows = db.prepare("SELECT " + columns::list(entity::job_columns) + " FROM jobs ORDER BY id");
        while (rows.step()) {
            result.push_back(read_job(rows, impl_->path));
            index[result.back().id] = result.size() - 1;
        }
    }
    {
        auto links = db.prepare("SELECT job_id, role, input_id FROM job_inputs ORDER BY job_id, role, input_id");
        while (links.step()) {
            const auto found = index.find(links.int64(0));
            if (found != index.end()) result[found->second].inputs.push_back(JobInput{links.int64(2), links.text(1)});
        }
    }
    for (JobInfo& job : result) job.state = impl_->effective_state(job.id, job.state);
    return result;
}

JobInfo Project::job(std::int64_t id) const {
    auto& db = *impl_->db;
    JobInfo job;
    {
        auto row = db.prepare("SELECT " + columns::list(entity::job_columns) + " FROM jobs WHERE id = ?");
        row.bind(1, id);
        if (!row.step()) throw Error(impl_->path + ": there is no " + job_name(id) + " in this project");
        job = read_job(row, impl_->path);
    }
    {
        auto links = db.prepare("SELECT role, input_id FROM job_inputs WHERE job_id = ? ORDER BY role, input_id");
        links.bind(1, id);
        while (links.step()) job.inputs.push_back(JobInput{links.int64(1), links.text(0)});
    }
    job.state = impl_->effective_state(job.id, job.state);
    return job;
}

std::unique_ptr<JobRecording> Project::begin_job(const JobSpec& spec) const {
    return begin_job(spec, RecordingOptions{});
}

std::unique_ptr<JobRecording> Project::begin_job(const JobSpec& spec, const RecordingOptions& options) const {
    impl_->require_writable("record a job");
    RecordingOptions own = options;
    own.project = impl_->options;
    own.project.create_if_missing = false;
    own.project.verify_inputs = false;
    return std::make_unique<JobRecording>(impl_->path, spec, own);
}

void Project::delete_job(std::int64_t id) {
    impl_->require_writable("delete a job");
    auto& db = *impl_->db;
    db.write("deleting " + job_name(id), [&] {
        auto row = db.prepare("SELECT state, owner_pid, owner_host FROM jobs WHERE id = ?");
        row.bind(1, id);
        if (!row.step()) throw Error(impl_->path + ": there is no " + job_name(id) + " in this project");
        const JobState state = parse_job_state(row.text(0));
        if (!is_final(state) && impl_->probe->held(id))
            throw Error(impl_->path + ": " + job_name(id) + " is still " + std::string(to_string(state)) +
                        " (process " + std::to_string(row.int64(1)) + " on " + row.text(2) +
                        "); wait for it to end before deleting it");
        auto erase = db.prepare("DELETE FROM jobs WHERE id = ?");
        erase.bind(1, id);
        erase.run();
    });
}

int Project::mark_interrupted_jobs() {
    if (read_only()) return 0;
    auto& db = *impl_->db;
    int marked = 0;
    // Inside the write transaction no owner can commit, and an owner commits
    // its final state before releasing its lock: a job that reads as active here
    // and whose lock is free has lost its owner for good.
    db.write("marking interrupted jobs", [&] {
        std::vector<std::int64_t> orphans;
        {
            auto active = db.prepare("SELECT id FROM jobs WHERE state IN ('queued', 'running')");
            while (active.step())
                if (!impl_->probe->held(active.int64(0))) orphans.push_back(active.int64(0));
        }
        for (std::int64_t id : orphans) {
            auto mark = db.prepare(
                "UPDATE jobs SET state = 'interrupted', ended_ms = ?, "
                "error = 'the process running it ended without finishing it (killed, crashed or lost power)' "
                "WHERE id = ? AND state IN ('queued', 'running')");
            mark.bind(1, now_ms()).bind(2, id);
            mark.run();
            marked += db.changes();
        }
    });
    return marked;
}

CheckReport Project::check() {
    auto& db = *impl_->db;
    CheckReport report;
    {
        auto integrity = db.prepare("PRAGMA integrity_check");
        while (integrity.step())
            if (integrity.text(0) != "ok") report.problems.push_back("integrity: " + integrity.text(0));
    }
    {
        auto keys = db.prepare("PRAGMA foreign_key_check");
        while (keys.step())
            report.problems.push_back("dangling reference: row " + std::to_string(keys.int64(1)) + " of " +
                                      keys.text(0) + " points to a missing row of " + keys.text(2));
    }
    if (!report.ok()) return report;  // the tables cannot be trusted further
    for (const auto& [table, column] : kResultTables) {
        // Names from our own constant table: safe to splice.
        auto counts = db.prepare(std::string("SELECT j.id, j.") + column + ", (SELECT count(*) FROM " + table +
                                 " r WHERE r.job_id = j.id), "
                                 "(SELECT coalesce(max(ordinal) + 1, 0) FROM " +
                                 table + " r WHERE r.job_id = j.id) FROM jobs j ORDER BY j.id");
        while (counts.step()) {
            const std::int64_t recorded = counts.int64(1), rows = counts.int64(2), span = counts.int64(3);
            if (recorded != rows || rows != span)
                report.problems.push_back(job_name(counts.int64(0)) + ": " + std::to_string(recorded) + " " + table +
                                          " recorded but " + std::to_string(rows) + " stored (ordinals up to " +
                                          std::to_string(span) + ")");
        }
    }
    for (const JobInfo& job : jobs())
        if (!is_final(job.state))
            report.notes.push_back(job_name(job.id) + " is " + std::string(to_string(job.state)) + " (process " +
                                   std::to_string(job.owner_pid) + " on " + job.owner_host + ")");
    std::error_code ec;
    for (const InputInfo& info : inputs()) {
        if (info.path == "-") continue;
        std::string status;
        if (!fs::exists(info.path, ec)) status = "is missing";
        else if (fs::file_size(info.path, ec) != info.size_bytes || sha256_file(info.path) != info.sha256)
            status = "has changed since it was recorded (SHA-256 differs)";
        if (status.empty()) continue;
        const std::string line = "input " + std::to_string(info.id) + " " + info.path + " " + status;
        if (info.embedded) report.notes.push_back(line + "; the project keeps its own copy");
        else
            report.problems.push_back(line + "; its results can no longer be traced to the file");
    }
    return report;
}

std::int64_t Project::vacuum() {
    impl_->require_writable("vacuum it");
    auto& db = *impl_->db;
    const auto size_of = [&] {
        std::error_code main_error, wal_error;
        const auto main = fs::file_size(impl_->path, main_error);
        const auto wal = fs::file_size(impl_->path + "-wal", wal_error);
        return static_cast<std::int64_t>((main_error ? 0 : main) + (wal_error ? 0 : wal));
    };
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const std::int64_t before = size_of();
    db.execute("VACUUM");
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    db.execute("PRAGMA optimize");
    return before - size_of();
}

namespace {

// Whether some connection has the SQLite database at `path` open. Every
// connection to a WAL database keeps a shared lock on the file while it is
// open, so an exclusive lock can only be had when nobody else is there; the
// probe takes it without waiting and lets it go at once.
bool database_in_use(const std::string& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        sqlite3_close_v2(db);
        // Not writable as a database: nothing can hold it open for writing
        // through SQLite, but it cannot be probed either; the rename decides.
        return false;
    }
    sqlite3_busy_timeout(db, 0);
    const int mode = sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE", nullptr, nullptr, nullptr);
    const int begin = sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr);
    const int primary = begin & 0xFF;
    if (begin == SQLITE_OK) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close_v2(db);
    return mode == SQLITE_OK && (primary == SQLITE_BUSY || primary == SQLITE_LOCKED);
}

bool has_sqlite_header(const std::string& path) {
    const auto header = file_header(path);
    return header && *header == kSqliteHeader;
}

void sync_path(const std::string& path, bool directory) {
    const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

}  // namespace

void Project::copy_to(const std::string& path) const {
    if (path.empty()) throw Error("cannot copy project " + impl_->path + ": no file name given");
    std::error_code ec;
    const fs::path target = fs::absolute(path, ec);
    const fs::path folder = target.parent_path();
    if (!fs::is_directory(folder, ec))
        throw Error("cannot copy project " + impl_->path + " to " + path + ": the folder " + folder.string() +
                    " does not exist");
    if (fs::exists(target, ec)) {
        if (fs::equivalent(target, impl_->path, ec)) throw Error("cannot copy project " + impl_->path + " onto itself");
        if (fs::is_directory(target, ec)) throw Error("cannot copy project to " + path + ": it is a folder");
        if (has_sqlite_header(target.string()) && database_in_use(target.string()))
            throw Error("cannot copy project to " + path +
                        ": that file is open (a project in use by AlignScope or another program); close it "
                        "first or choose another name");
    }

    // VACUUM INTO writes only into a new or empty file: a unique one beside
    // the target, so the final rename stays within one file system.
    std::string temporary = (folder / ("." + target.filename().string() + ".copy-XXXXXX")).string();
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0)
        throw Error("cannot copy project to " + path + ": cannot create a file in " + folder.string() + ": " +
                    std::strerror(errno));
    ::close(fd);
    try {
        impl_->db->prepare("VACUUM INTO ?1").bind(1, temporary).run();
        sync_path(temporary, false);
        // A -wal left beside an old file at the target would be replayed into
        // the copy on its first open: the target is not in use (checked above),
        // so what lies beside it is stale.
        for (const char* suffix : {"-wal", "-shm"}) fs::remove(target.string() + suffix, ec);
        fs::rename(temporary, target, ec);
        if (ec) throw Error("cannot copy project to " + path + ": cannot move the copy into place: " + ec.message());
        sync_path(folder.string(), true);
    } catch (...) {
        fs::remove(temporary, ec);
        throw;
    }
}

std::int64_t Project::data_version() const { return impl_->db->query_int("PRAGMA data_version"); }

bool Project::changed_since(std::int64_t& seen) const {
    const std::int64_t now = data_version();
    const bool changed = now != seen;
    seen = now;
    return changed;
}

}  // namespace alignscope::store
