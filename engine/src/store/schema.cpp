// Project schema migrations. Never edit a step that has shipped: add a new one
// (and a fixture of the old version in tests/data/projects/).
#include "schema.hpp"

#include <alignscope/error.hpp>

#include <array>
#include <string>
#include <vector>

namespace alignscope::store::schema {
namespace {

// Version 1: inputs, jobs and every result kind.
//
// Result tables are keyed by (job_id, ordinal): ordinals run 0, 1, 2, ... per
// job and kind, so a page is a range scan of the key. Small rows (hits,
// timeline events, bench points) live in WITHOUT ROWID tables clustered on that
// key: one b-tree, appended in order, and no second index to maintain.
// Alignments, long alignments and heatmaps carry long text or blobs and keep a
// rowid table with a unique (job_id, ordinal) index. The jobs row carries the
// result counts, updated in the same transaction as the rows.
const std::vector<const char*> kVersion1 = {
    R"(CREATE TABLE inputs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('sequences', 'profile')),
        path TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        alphabet TEXT NOT NULL,
        record_count INTEGER NOT NULL,
        residue_count INTEGER NOT NULL,
        embedded INTEGER NOT NULL CHECK (embedded IN (0, 1)),
        content BLOB,
        added_ms INTEGER NOT NULL,
        UNIQUE (path, sha256, kind)))",
    R"(CREATE TABLE input_sequences (
        id INTEGER PRIMARY KEY,
        input_id INTEGER NOT NULL REFERENCES inputs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        residues TEXT NOT NULL,
        quality TEXT NOT NULL,
        UNIQUE (input_id, ordinal)))",
    R"(CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        command TEXT NOT NULL,
        algorithm TEXT NOT NULL,
        mode TEXT NOT NULL,
        scoring TEXT NOT NULL,
        score_scale INTEGER NOT NULL CHECK (score_scale > 0),
        devices TEXT NOT NULL,
        streams INTEGER NOT NULL,
        threads INTEGER NOT NULL,
        kernel TEXT NOT NULL,
        build_version TEXT NOT NULL,
        driver_version TEXT NOT NULL,
        spec TEXT NOT NULL CHECK (json_valid(spec)),
        state TEXT NOT NULL
            CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')),
        created_ms INTEGER NOT NULL,
        started_ms INTEGER,
        ended_ms INTEGER,
        error TEXT NOT NULL DEFAULT '',
        cells_done INTEGER NOT NULL DEFAULT 0,
        cells_total INTEGER NOT NULL DEFAULT 0,
        items_done INTEGER NOT NULL DEFAULT 0,
        items_total INTEGER NOT NULL DEFAULT 0,
        owner_pid INTEGER NOT NULL,
        owner_host TEXT NOT NULL,
        clock_source TEXT NOT NULL DEFAULT '',
        alignment_count INTEGER NOT NULL DEFAULT 0,
        hit_count INTEGER NOT NULL DEFAULT 0,
        long_alignment_count INTEGER NOT NULL DEFAULT 0,
        heatmap_count INTEGER NOT NULL DEFAULT 0,
        timeline_event_count INTEGER NOT NULL DEFAULT 0,
        bench_point_count INTEGER NOT NULL DEFAULT 0))",
    "CREATE INDEX jobs_by_state ON jobs (state)",
    R"(CREATE TABLE job_inputs (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        input_id INTEGER NOT NULL REFERENCES inputs (id),
        PRIMARY KEY (job_id, role, input_id)) WITHOUT ROWID)",
    "CREATE INDEX job_inputs_by_input ON job_inputs (input_id)",
    R"(CREATE TABLE alignments (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        query_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        score INTEGER NOT NULL,
        query_begin INTEGER NOT NULL,
        query_end INTEGER NOT NULL,
        target_begin INTEGER NOT NULL,
        target_end INTEGER NOT NULL,
        query_length INTEGER NOT NULL,
        target_length INTEGER NOT NULL,
        cigar TEXT NOT NULL,
        query_aligned TEXT NOT NULL,
        target_aligned TEXT NOT NULL,
        length INTEGER NOT NULL,
        identities INTEGER NOT NULL,
        similarities INTEGER NOT NULL,
        gaps INTEGER NOT NULL,
        gap_opens INTEGER NOT NULL,
        device TEXT NOT NULL,
        kernel TEXT NOT NULL,
        UNIQUE (job_id, ordinal)))",
    R"(CREATE TABLE hits (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        query_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        rank INTEGER NOT NULL,
        score INTEGER NOT NULL,
        bits REAL,
        evalue REAL,
        query_begin INTEGER NOT NULL,
        query_end INTEGER NOT NULL,
        target_begin INTEGER NOT NULL,
        target_end INTEGER NOT NULL,
        query_length INTEGER NOT NULL,
        target_length INTEGER NOT NULL,
        PRIMARY KEY (job_id, ordinal)) WITHOUT ROWID)",
    R"(CREATE TABLE long_alignments (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        query_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        score INTEGER NOT NULL,
        query_begin INTEGER NOT NULL,
        query_end INTEGER NOT NULL,
        target_begin INTEGER NOT NULL,
        target_end INTEGER NOT NULL,
        query_length INTEGER NOT NULL,
        target_length INTEGER NOT NULL,
        length INTEGER NOT NULL,
        identities INTEGER NOT NULL,
        similarities INTEGER NOT NULL,
        gaps INTEGER NOT NULL,
        gap_opens INTEGER NOT NULL,
        alignment_path TEXT NOT NULL,
        alignment_format TEXT NOT NULL,
        device TEXT NOT NULL,
        kernel TEXT NOT NULL,
        seconds REAL NOT NULL,
        UNIQUE (job_id, ordinal)))",
    R"(CREATE TABLE heatmaps (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        label TEXT NOT NULL,
        query_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        source_rows INTEGER NOT NULL,
        source_cols INTEGER NOT NULL,
        rows INTEGER NOT NULL CHECK (rows >= 0),
        cols INTEGER NOT NULL CHECK (cols >= 0),
        cell_values BLOB NOT NULL CHECK (length(cell_values) = 4 * rows * cols),
        path_cells BLOB NOT NULL,
        UNIQUE (job_id, ordinal)))",
    R"(CREATE TABLE timeline_events (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        name TEXT NOT NULL,
        category TEXT NOT NULL,
        device TEXT NOT NULL,
        lane INTEGER NOT NULL,
        start_ns INTEGER NOT NULL,
        end_ns INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        cells INTEGER NOT NULL,
        PRIMARY KEY (job_id, ordinal)) WITHOUT ROWID)",
    R"(CREATE TABLE bench_points (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        series TEXT NOT NULL,
        device TEXT NOT NULL,
        x REAL NOT NULL,
        y REAL NOT NULL,
        x_label TEXT NOT NULL,
        y_label TEXT NOT NULL,
        parameters TEXT NOT NULL CHECK (json_valid(parameters)),
        PRIMARY KEY (job_id, ordinal)) WITHOUT ROWID)",
};

// Version 2: long-pair jobs. Heatmaps may have blocks of unequal size (a
// long-pair job's stage-1 overview, binned as its runner binned the rows):
// the first source row and column of each block, as little-endian int64s;
// empty blobs (every version-1 heatmap) keep the uniform rule. The pipeline
// statistics of each long pair aligned (stage timings and cells, special
// rows, crossings, split levels, base segments, runner settings) get a
// table of their own, counted in the jobs row like every result kind.
const std::vector<const char*> kVersion2 = {
    "ALTER TABLE heatmaps ADD COLUMN row_edges BLOB NOT NULL DEFAULT x''",
    "ALTER TABLE heatmaps ADD COLUMN col_edges BLOB NOT NULL DEFAULT x''",
    "ALTER TABLE jobs ADD COLUMN long_pair_stats_count INTEGER NOT NULL DEFAULT 0",
    R"(CREATE TABLE long_pair_stats (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        query_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        query_length INTEGER NOT NULL,
        target_length INTEGER NOT NULL,
        device TEXT NOT NULL,
        kernel TEXT NOT NULL,
        strategy TEXT NOT NULL,
        kernels INTEGER NOT NULL,
        streams INTEGER NOT NULL,
        seconds REAL NOT NULL,
        stage1_seconds REAL NOT NULL,
        stage2_seconds REAL NOT NULL,
        stage3_seconds REAL NOT NULL,
        stage1_cells INTEGER NOT NULL,
        stage2_cells INTEGER NOT NULL,
        stage3_cells INTEGER NOT NULL,
        special_rows INTEGER NOT NULL,
        crossings INTEGER NOT NULL,
        split_levels INTEGER NOT NULL,
        base_segments INTEGER NOT NULL,
        PRIMARY KEY (job_id, ordinal)) WITHOUT ROWID)",
};

// Version 3: settings kept with the project (key -> text), such as the
// workbench's Job panel, so a project reopens as it was left.
const std::vector<const char*> kVersion3 = {
    R"(CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL) WITHOUT ROWID)",
};

// Version 4: the workbench's analyses that are not pairwise jobs (a profile
// search, an all-against-all matrix): one row each, what was asked (JSON) and
// its results as one document (JSON text in a blob, read back whole).
const std::vector<const char*> kVersion4 = {
    R"(CREATE TABLE analyses (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('profile_search', 'allvsall')),
        title TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        parameters TEXT NOT NULL CHECK (json_valid(parameters)),
        results BLOB NOT NULL))",
};

const std::vector<const std::vector<const char*>*> kSteps = {&kVersion1, &kVersion2, &kVersion3, &kVersion4};

}  // namespace

int latest_version() { return static_cast<int>(kSteps.size()); }

void migrate(sqlite::Connection& db, int to) {
    if (to > latest_version()) throw Error("internal: no migration to schema version " + std::to_string(to));
    db.write("upgrading the project's schema", [&] {
        const int from = static_cast<int>(db.query_int("PRAGMA user_version"));
        if (from >= to) return;  // another process got there first
        if (from == 0) db.execute("PRAGMA application_id = " + std::to_string(application_id));
        for (int version = from; version < to; ++version)
            for (const char* statement : *kSteps[static_cast<std::size_t>(version)]) db.execute(statement);
        // PRAGMA takes no bound parameters; the value is our own integer.
        db.execute("PRAGMA user_version = " + std::to_string(to));
    });
}

}  // namespace alignscope::store::schema
