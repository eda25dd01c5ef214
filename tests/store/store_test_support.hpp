// Shared pieces of the project-store suites: sample results made with a fixed
// seed (alignments from the reference aligner, so they are real alignments),
// a job spec with a real scoring scheme, and raw SQLite access for looking
// behind the store's back.
#pragma once

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <sqlite3.h>

#include <QString>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace store_test {

using namespace alignscope;

inline ScoringScheme blosum62_half() {
    // Half-step penalties, so scores are stored with scale 2 and the user-unit
    // conversion is exercised.
    return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10.5, 0.5);
}

inline store::JobSpec sample_spec(std::string command = "align") {
    store::JobSpec spec;
    spec.command = std::move(command);
    spec.algorithm = "sw_affine";
    spec.mode = "local";
    spec.set_scheme(blosum62_half());
    spec.devices = "cpu";
    spec.threads = 2;
    spec.command_line = "alignscope-cli align q.fa t.fa --mode local";
    spec.parameters["zip"] = "false";
    return spec;
}

inline std::string random_protein(std::mt19937& rng, std::size_t length) {
    static const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
    std::uniform_int_distribution<std::size_t> pick(0, letters.size() - 1);
    std::string s(length, 'A');
    for (char& c : s) c = letters[pick(rng)];
    return s;
}

// Real local alignments of related random proteins (seeded): the second of
// each pair is the first with point mutations and an indel.
inline std::vector<Alignment> sample_alignments(int count, unsigned seed = 7) {
    std::mt19937 rng(seed);
    const ScoringScheme scheme = blosum62_half();
    AlignOptions options;
    options.mode = AlignmentMode::Local;
    std::vector<Alignment> result;
    for (int k = 0; k < count; ++k) {
        std::string q = random_protein(rng, 30 + k % 17);
        std::string t = q;
        t[t.size() / 3] = 'W';
        t.erase(t.size() / 2, 2);
        t.insert(0, random_protein(rng, 5));
        Alignment a = align_reference(q, t, scheme, options);
        a.query_id = "query_" + std::to_string(k);
        a.target_id = "target," + std::to_string(k) + " \"quoted\"";  // a comma and quotes for CSV
        a.device = "cpu-ref";
        a.kernel = "sw_affine_scalar";
        result.push_back(std::move(a));
    }
    return result;
}

inline std::vector<store::Hit> sample_hits(int count, int offset = 0) {
    std::vector<store::Hit> hits;
    for (int k = offset; k < offset + count; ++k) {
        store::Hit h;
        h.query_id = "q" + std::to_string(k / 10);
        h.target_id = "sp|P" + std::to_string(10000 + k) + "|PROT_HUMAN";
        h.rank = k % 10 + 1;
        h.score = 2 * (500 - k % 10) + (k % 2);  // scaled by 2: odd values are half points
        if (k % 7 != 0) {
            h.bits = 200.25 - k % 10;
            h.evalue = std::ldexp(1.0, -(k % 60));
        }
        h.query_begin = 1 + k % 3;
        h.query_end = 100 + k % 5;
        h.target_begin = 10 + k % 11;
        h.target_end = 120 + k % 13;
        h.query_length = 110;
        h.target_length = 300 + k;
        hits.push_back(h);
    }
    return hits;
}

inline std::vector<TimelineEvent> sample_events(int count, int offset = 0) {
    std::vector<TimelineEvent> events;
    const std::int64_t t0 = 7'000'000'000'000;
    for (int k = offset; k < offset + count; ++k) {
        TimelineEvent e;
        e.name = k % 3 == 0 ? "H2D" : "sw_affine_inter_s16";
        e.category = k % 3 == 0 ? "copy" : "kernel";
        e.device = k % 2 ? "gpu:1" : "gpu:0";
        e.lane = k % 4;
        e.start_ns = t0 + 1000 * std::int64_t{k};
        e.end_ns = e.start_ns + 500 + k % 300;
        e.bytes = k % 3 == 0 ? 4096u * static_cast<unsigned>(k + 1) : 0;
        e.cells = k % 3 == 0 ? 0 : 1'000'000u + static_cast<unsigned>(k);
        events.push_back(e);
    }
    return events;
}

inline std::vector<store::BenchPoint> sample_bench(int count) {
    std::vector<store::BenchPoint> points;
    for (int k = 0; k < count; ++k) {
        store::BenchPoint p;
        p.series = k % 2 ? "cpu, 2 threads" : "gpu:0, 4 streams";
        p.device = k % 2 ? "cpu" : "gpu:0";
        p.x = 64.0 * (k + 1);
        p.y = 0.1 + 1.0 / (k + 3);  // GCUPS, not round
        p.x_label = "query length";
        p.y_label = "GCUPS";
        p.parameters = {{"streams", std::to_string(k % 4 + 1)}, {"note", "a, \"b\"\tc"}};
        points.push_back(p);
    }
    return points;
}

inline store::LongAlignmentSummary sample_long_alignment() {
    store::LongAlignmentSummary s;
    s.query_id = "chr_a";
    s.target_id = "chr_b";
    s.mode = AlignmentMode::Global;
    s.score = 2 * 123456 + 1;
    s.query_begin = 1;
    s.query_end = 1'000'000;
    s.target_begin = 1;
    s.target_end = 999'000;
    s.query_length = 1'000'000;
    s.target_length = 999'000;
    s.stats = {1'002'000, 950'000, 960'000, 3'000, 120};
    s.alignment_path = "/data/runs/chr_a-chr_b.cigar";
    s.alignment_format = "cigar";
    s.device = "gpu:0";
    s.kernel = "nw_affine_diag_s32";
    s.seconds = 12.75;
    return s;
}

// Raw SQLite access for tests that look behind the store.
class RawDatabase {
public:
    explicit RawDatabase(const QString& path, bool writable = false) {
        const int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
        if (sqlite3_open_v2(path.toUtf8().constData(), &db_, flags, nullptr) != SQLITE_OK)
            qFatal("cannot open %s", qPrintable(path));
        sqlite3_busy_timeout(db_, 10000);
    }
    ~RawDatabase() { sqlite3_close_v2(db_); }
    RawDatabase(const RawDatabase&) = delete;
    RawDatabase& operator=(const RawDatabase&) = delete;

    // Every row's first column as text.
    QStringList column(const char* sql) const {
        QStringList values;
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) return {"prepare failed: " + error()};
        int rc = 0;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            const auto* text = sqlite3_column_text(s, 0);
            values << (text ? QString::fromUtf8(reinterpret_cast<const char*>(text)) : QString());
        }
        if (rc != SQLITE_DONE) values << "step failed: " + error();
        sqlite3_finalize(s);
        return values;
    }
    qint64 integer(const char* sql) const {
        const QStringList values = column(sql);
        return values.isEmpty() ? -1 : values.first().toLongLong();
    }
    bool execute(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK; }
    QString error() const { return QString::fromUtf8(sqlite3_errmsg(db_)); }

private:
    sqlite3* db_ = nullptr;
};

inline QString integrity(const QString& path) { return RawDatabase(path).column("PRAGMA integrity_check").join(";"); }

}  // namespace store_test
