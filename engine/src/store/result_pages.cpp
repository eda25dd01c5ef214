// Reading a job's results a page at a time: keyset reads on (job_id, ordinal),
// one more row than asked to learn whether another page follows. Each entity's
// columns are named once, in its column table.
#include "entity_columns.hpp"
#include "project_impl.hpp"

#include <alignscope/error.hpp>

#include <nlohmann/json.hpp>

namespace alignscope::store {
namespace {

int checked_limit(int limit) {
    if (limit < 1 || limit > 1'000'000)
        throw Error("a result page holds 1 to 1,000,000 rows, not " + std::to_string(limit));
    return limit;
}

// Binds job, from and limit + 1 to parameters 1-3, reads rows with `read`, and
// trims the extra row into Page::more.
template <class Row, class Read>
Page<Row> read_page(sqlite::Connection& db, std::string_view sql, std::int64_t job_id, std::int64_t from, int limit,
                    Read&& read) {
    Page<Row> page;
    page.first = std::max<std::int64_t>(from, 0);
    auto rows = db.prepare(sql);
    rows.bind(1, job_id).bind(2, page.first).bind(3, checked_limit(limit) + 1);
    page.rows.reserve(static_cast<std::size_t>(std::min(limit, 10'000)));
    while (rows.step()) {
        if (static_cast<int>(page.rows.size()) == limit) {
            page.more = true;
            break;
        }
        page.rows.push_back(read(rows));
    }
    return page;
}

using columns::Column;
using namespace entity;

// "SELECT <the table's columns><extra> FROM <rest>".
template <class Row, std::size_t N>
std::string select(const std::array<Column<Row>, N>& table, std::string_view rest, std::string_view extra = {}) {
    return "SELECT " + columns::list(table) + std::string(extra) + " FROM " + std::string(rest);
}

Alignment read_alignment(const sqlite::Statement& r) { return columns::read(alignment_columns, r); }
Hit read_hit(const sqlite::Statement& r) { return columns::read(hit_columns, r); }

}  // namespace

Page<Alignment> Project::alignments(std::int64_t job_id, std::int64_t from, int limit) const {
    static const std::string sql =
        select(alignment_columns, "alignments WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?");
    return read_page<Alignment>(*impl_->db, sql, job_id, from, limit, read_alignment);
}

Page<Hit> Project::hits(std::int64_t job_id, std::int64_t from, int limit) const {
    static const std::string sql =
        select(hit_columns, "hits WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?");
    return read_page<Hit>(*impl_->db, sql, job_id, from, limit, read_hit);
}

std::optional<Alignment> Project::hit_alignment(std::int64_t job_id, std::int64_t hit_ordinal) const {
    sqlite::Connection& db = *impl_->db;
    Hit hit;
    {
        static const std::string sql = select(hit_columns, "hits WHERE job_id = ? AND ordinal = ?");
        auto row = db.prepare(sql);
        row.bind(1, job_id).bind(2, hit_ordinal);
        if (!row.step())
            throw Error(impl_->path + ": " + job_name(job_id) + " has no hit number " +
                        std::to_string(hit_ordinal + 1));
        hit = read_hit(row);
    }
    std::int64_t hit_count = 0, alignment_count = 0;
    {
        auto counts = db.prepare("SELECT hit_count, alignment_count FROM jobs WHERE id = ?");
        counts.bind(1, job_id);
        if (counts.step()) {
            hit_count = counts.int64(0);
            alignment_count = counts.int64(1);
        }
    }
    if (alignment_count == 0) return std::nullopt;
    // The alignment with the hit's ids, score and coordinates among rows
    // [first, last]; of several (a database with repeated ids), the one
    // nearest the hit's own ordinal.
    auto find = [&](std::int64_t first, std::int64_t last) -> std::optional<Alignment> {
        if (first > last) return std::nullopt;
        static const std::string sql =
            select(alignment_columns,
                   "alignments WHERE job_id = ? AND ordinal >= ? AND ordinal <= ? "
                   "AND query_id = ? AND target_id = ? AND score = ? AND query_begin = ? AND query_end = ? "
                   "AND target_begin = ? AND target_end = ? ORDER BY ordinal DESC LIMIT 1");
        auto rows = db.prepare(sql);
        rows.bind(1, job_id).bind(2, first).bind(3, last).bind(4, hit.query_id).bind(5, hit.target_id);
        rows.bind(6, hit.score).bind(7, hit.query_begin).bind(8, hit.query_end);
        rows.bind(9, hit.target_begin).bind(10, hit.target_end);
        if (!rows.step()) return std::nullopt;
        return read_alignment(rows);
    };
    // Alignments in hit order, a subsequence of the hits: hit h's is row
    // h - (the hits before h that have none), at most hits - alignments back.
    const std::int64_t last = std::min(hit_ordinal, alignment_count - 1);
    const std::int64_t first =
        std::max<std::int64_t>(0, hit_ordinal - std::max<std::int64_t>(0, hit_count - alignment_count));
    if (auto found = find(first, last)) return found;
    // A recording that kept another order: the rest of the job's alignments.
    if (auto found = find(last + 1, alignment_count - 1)) return found;
    return find(0, first - 1);
}

Page<TimelineEvent> Project::timeline(std::int64_t job_id, std::int64_t from, int limit) const {
    const std::string where = impl_->path + ": " + job_name(job_id);
    static const std::string sql =
        select(timeline_columns, "timeline_events WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
               ", ordinal");
    return read_page<TimelineEvent>(*impl_->db, sql, job_id, from, limit, [&where](const sqlite::Statement& r) {
        TimelineEvent e = columns::read(timeline_columns, r);
        // Any two times within 2^62 ns of 0 differ by less than 2^63: the
        // writer's and the views' differences never overflow. No clock a job
        // records gives more (146 years).
        constexpr std::int64_t kMaxTime = (std::int64_t{1} << 62) - 1;
        if (e.start_ns < -kMaxTime || e.start_ns > kMaxTime || e.end_ns < -kMaxTime || e.end_ns > kMaxTime)
            throw Error(where + ": timeline event " + std::to_string(r.int64(int(timeline_columns.size()))) +
                        " has a time out of range (" + std::to_string(e.start_ns) + " .. " + std::to_string(e.end_ns) +
                        " ns)");
        return e;
    });
}

Page<LongAlignmentSummary> Project::long_alignments(std::int64_t job_id, std::int64_t from, int limit) const {
    static const std::string sql =
        select(long_alignment_columns, "long_alignments WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?");
    return read_page<LongAlignmentSummary>(*impl_->db, sql, job_id, from, limit, [](const sqlite::Statement& r) {
        return columns::read(long_alignment_columns, r);
    });
}

Page<BenchPoint> Project::bench_points(std::int64_t job_id, std::int64_t from, int limit) const {
    const std::string source = impl_->path;
    static const std::string sql =
        select(bench_point_columns, "bench_points WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
               ", parameters");
    return read_page<BenchPoint>(*impl_->db, sql, job_id, from, limit, [&source](const sqlite::Statement& r) {
        BenchPoint p = columns::read(bench_point_columns, r);
        try {
            nlohmann::json::parse(r.text(int(bench_point_columns.size()))).get_to(p.parameters);
        } catch (const nlohmann::json::exception& e) {
            throw Error(source + ": a benchmark point's parameters are not a JSON object of strings (" + e.what() +
                        ")");
        }
        return p;
    });
}

std::vector<Heatmap> Project::heatmaps(std::int64_t job_id) const {
    static const std::string sql = select(heatmap_columns, "heatmaps WHERE job_id = ? ORDER BY ordinal");
    auto rows = impl_->db->prepare(sql);
    rows.bind(1, job_id);
    return columns::all_rows<Heatmap>(rows, [&](const sqlite::Statement& r) {
        Heatmap h = columns::read(heatmap_columns, r);
        // The writer checked it; a damaged file may not hold what it wrote, and
        // the views index values and path cells without checking.
        h.check(impl_->path + ": " + job_name(job_id) + ": heatmap " + h.label);
        return h;
    });
}

std::vector<LongPairStats> Project::long_pair_stats(std::int64_t job_id) const {
    static const std::string sql = select(long_pair_stats_columns, "long_pair_stats WHERE job_id = ? ORDER BY ordinal");
    auto rows = impl_->db->prepare(sql);
    rows.bind(1, job_id);
    return columns::all_rows<LongPairStats>(rows, [](const sqlite::Statement& r) {
        return columns::read(long_pair_stats_columns, r);
    });
}

}  // namespace alignscope::store
