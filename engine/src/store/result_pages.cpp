// Reading a job's results a page at a time: keyset reads on (job_id, ordinal),
// one more row than asked to learn whether another page follows.
#include "project_impl.hpp"

#include <alignscope/error.hpp>

#include <nlohmann/json.hpp>

#include <bit>
#include <cstring>

namespace alignscope::store {
namespace {

int checked_limit(int limit) {
    if (limit < 1 || limit > 1'000'000) throw Error("a result page holds 1 to 1,000,000 rows, not " + std::to_string(limit));
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

std::vector<float> floats_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<float> values(blob.size() / 4);
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::uint32_t bits = 0;
        for (int b = 3; b >= 0; --b) bits = (bits << 8) | blob[4 * k + static_cast<std::size_t>(b)];  // little-endian
        values[k] = std::bit_cast<float>(bits);
    }
    return values;
}

std::vector<std::pair<int, int>> cells_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<std::pair<int, int>> cells(blob.size() / 8);
    auto word = [&blob](std::size_t at) {
        std::uint32_t bits = 0;
        for (int b = 3; b >= 0; --b) bits = (bits << 8) | blob[at + static_cast<std::size_t>(b)];
        return static_cast<int>(static_cast<std::int32_t>(bits));
    };
    for (std::size_t k = 0; k < cells.size(); ++k) cells[k] = {word(8 * k), word(8 * k + 4)};
    return cells;
}

std::vector<std::int64_t> int64s_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<std::int64_t> values(blob.size() / 8);
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::uint64_t bits = 0;
        for (int b = 7; b >= 0; --b) bits = (bits << 8) | blob[8 * k + static_cast<std::size_t>(b)];  // little-endian
        values[k] = static_cast<std::int64_t>(bits);
    }
    return values;
}

#define ALIGNMENT_COLUMNS                                                                                        \
    "query_id, target_id, mode, score, query_begin, query_end, target_begin, target_end, query_length, "         \
    "target_length, cigar, query_aligned, target_aligned, length, identities, similarities, gaps, gap_opens, "  \
    "device, kernel"

Alignment read_alignment(const sqlite::Statement& r) {
    Alignment a;
    a.query_id = r.text(0);
    a.target_id = r.text(1);
    a.mode = parse_mode(r.text(2));
    a.score = r.int64(3);
    a.query_begin = r.int64(4);
    a.query_end = r.int64(5);
    a.target_begin = r.int64(6);
    a.target_end = r.int64(7);
    a.query_length = r.int64(8);
    a.target_length = r.int64(9);
    const std::string cigar = r.text(10);
    if (!cigar.empty()) a.cigar = Cigar::parse(cigar);
    a.query_aligned = r.text(11);
    a.target_aligned = r.text(12);
    a.stats.length = r.int64(13);
    a.stats.identities = r.int64(14);
    a.stats.similarities = r.int64(15);
    a.stats.gaps = r.int64(16);
    a.stats.gap_opens = r.int64(17);
    a.device = r.text(18);
    a.kernel = r.text(19);
    return a;
}

#define HIT_COLUMNS                                                                                              \
    "query_id, target_id, rank, score, bits, evalue, query_begin, query_end, target_begin, target_end, "         \
    "query_length, target_length"

Hit read_hit(const sqlite::Statement& r) {
    Hit h;
    h.query_id = r.text(0);
    h.target_id = r.text(1);
    h.rank = r.int64(2);
    h.score = r.int64(3);
    h.bits = r.optional_real(4);
    h.evalue = r.optional_real(5);
    h.query_begin = r.int64(6);
    h.query_end = r.int64(7);
    h.target_begin = r.int64(8);
    h.target_end = r.int64(9);
    h.query_length = r.int64(10);
    h.target_length = r.int64(11);
    return h;
}

}  // namespace

Page<Alignment> Project::alignments(std::int64_t job_id, std::int64_t from, int limit) const {
    return read_page<Alignment>(*impl_->db,
                                "SELECT " ALIGNMENT_COLUMNS " FROM alignments WHERE job_id = ? AND ordinal >= ? "
                                "ORDER BY ordinal LIMIT ?",
                                job_id, from, limit, read_alignment);
}

Page<Hit> Project::hits(std::int64_t job_id, std::int64_t from, int limit) const {
    return read_page<Hit>(*impl_->db,
                          "SELECT " HIT_COLUMNS " FROM hits WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
                          job_id, from, limit, read_hit);
}

std::optional<Alignment> Project::hit_alignment(std::int64_t job_id, std::int64_t hit_ordinal) const {
    sqlite::Connection& db = *impl_->db;
    Hit hit;
    {
        auto row = db.prepare("SELECT " HIT_COLUMNS " FROM hits WHERE job_id = ? AND ordinal = ?");
        row.bind(1, job_id).bind(2, hit_ordinal);
        if (!row.step())
            throw Error(impl_->path + ": " + job_name(job_id) + " has no hit number " + std::to_string(hit_ordinal + 1));
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
        auto rows = db.prepare(
            "SELECT " ALIGNMENT_COLUMNS " FROM alignments WHERE job_id = ? AND ordinal >= ? AND ordinal <= ? "
            "AND query_id = ? AND target_id = ? AND score = ? AND query_begin = ? AND query_end = ? "
            "AND target_begin = ? AND target_end = ? ORDER BY ordinal DESC LIMIT 1");
        rows.bind(1, job_id).bind(2, first).bind(3, last).bind(4, hit.query_id).bind(5, hit.target_id);
        rows.bind(6, hit.score).bind(7, hit.query_begin).bind(8, hit.query_end);
        rows.bind(9, hit.target_begin).bind(10, hit.target_end);
        if (!rows.step()) return std::nullopt;
        return read_alignment(rows);
    };
    // Alignments in hit order, a subsequence of the hits: hit h's is row
    // h - (the hits before h that have none), at most hits - alignments back.
    const std::int64_t last = std::min(hit_ordinal, alignment_count - 1);
    const std::int64_t first = std::max<std::int64_t>(0, hit_ordinal - std::max<std::int64_t>(0, hit_count - alignment_count));
    if (auto found = find(first, last)) return found;
    // A recording that kept another order: the rest of the job's alignments.
    if (auto found = find(last + 1, alignment_count - 1)) return found;
    return find(0, first - 1);
}

Page<TimelineEvent> Project::timeline(std::int64_t job_id, std::int64_t from, int limit) const {
    const std::string where = impl_->path + ": " + job_name(job_id);
    return read_page<TimelineEvent>(*impl_->db,
                                    "SELECT name, category, device, lane, start_ns, end_ns, bytes, cells, ordinal "
                                    "FROM timeline_events WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
                                    job_id, from, limit, [&where](const sqlite::Statement& r) {
                                        TimelineEvent e;
                                        e.name = r.text(0);
                                        e.category = r.text(1);
                                        e.device = r.text(2);
                                        e.lane = static_cast<int>(r.int64(3));
                                        e.start_ns = r.int64(4);
                                        e.end_ns = r.int64(5);
                                        e.bytes = static_cast<std::uint64_t>(r.int64(6));
                                        e.cells = static_cast<std::uint64_t>(r.int64(7));
                                        // Any two times within 2^62 ns of 0 differ by less than
                                        // 2^63: the writer's and the views' differences never
                                        // overflow. No clock a job records gives more (146 years).
                                        constexpr std::int64_t kMaxTime = (std::int64_t{1} << 62) - 1;
                                        if (e.start_ns < -kMaxTime || e.start_ns > kMaxTime || e.end_ns < -kMaxTime ||
                                            e.end_ns > kMaxTime)
                                            throw Error(where + ": timeline event " + std::to_string(r.int64(8)) +
                                                        " has a time out of range (" + std::to_string(e.start_ns) +
                                                        " .. " + std::to_string(e.end_ns) + " ns)");
                                        return e;
                                    });
}

Page<LongAlignmentSummary> Project::long_alignments(std::int64_t job_id, std::int64_t from, int limit) const {
    return read_page<LongAlignmentSummary>(
        *impl_->db,
        "SELECT query_id, target_id, mode, score, query_begin, query_end, target_begin, target_end, query_length, "
        "target_length, length, identities, similarities, gaps, gap_opens, alignment_path, alignment_format, "
        "device, kernel, seconds FROM long_alignments WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
        job_id, from, limit, [](const sqlite::Statement& r) {
            LongAlignmentSummary s;
            s.query_id = r.text(0);
            s.target_id = r.text(1);
            s.mode = parse_mode(r.text(2));
            s.score = r.int64(3);
            s.query_begin = r.int64(4);
            s.query_end = r.int64(5);
            s.target_begin = r.int64(6);
            s.target_end = r.int64(7);
            s.query_length = r.int64(8);
            s.target_length = r.int64(9);
            s.stats.length = r.int64(10);
            s.stats.identities = r.int64(11);
            s.stats.similarities = r.int64(12);
            s.stats.gaps = r.int64(13);
            s.stats.gap_opens = r.int64(14);
            s.alignment_path = r.text(15);
            s.alignment_format = r.text(16);
            s.device = r.text(17);
            s.kernel = r.text(18);
            s.seconds = r.real(19);
            return s;
        });
}

Page<BenchPoint> Project::bench_points(std::int64_t job_id, std::int64_t from, int limit) const {
    const std::string source = impl_->path;
    return read_page<BenchPoint>(
        *impl_->db,
        "SELECT series, device, x, y, x_label, y_label, parameters FROM bench_points "
        "WHERE job_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
        job_id, from, limit, [&source](const sqlite::Statement& r) {
            BenchPoint p;
            p.series = r.text(0);
            p.device = r.text(1);
            p.x = r.real(2);
            p.y = r.real(3);
            p.x_label = r.text(4);
            p.y_label = r.text(5);
            try {
                nlohmann::json::parse(r.text(6)).get_to(p.parameters);
            } catch (const nlohmann::json::exception& e) {
                throw Error(source + ": a benchmark point's parameters are not a JSON object of strings (" +
                            e.what() + ")");
            }
            return p;
        });
}

std::vector<Heatmap> Project::heatmaps(std::int64_t job_id) const {
    std::vector<Heatmap> result;
    auto rows = impl_->db->prepare(
        "SELECT label, query_id, target_id, source_rows, source_cols, rows, cols, cell_values, path_cells, "
        "row_edges, col_edges FROM heatmaps WHERE job_id = ? ORDER BY ordinal");
    rows.bind(1, job_id);
    while (rows.step()) {
        Heatmap h;
        h.label = rows.text(0);
        h.query_id = rows.text(1);
        h.target_id = rows.text(2);
        h.source_rows = rows.int64(3);
        h.source_cols = rows.int64(4);
        h.rows = static_cast<int>(rows.int64(5));
        h.cols = static_cast<int>(rows.int64(6));
        h.values = floats_from_blob(rows.blob(7));
        h.path = cells_from_blob(rows.blob(8));
        h.row_edges = int64s_from_blob(rows.blob(9));
        h.col_edges = int64s_from_blob(rows.blob(10));
        // The writer checked it; a damaged file may not hold what it wrote, and
        // the views index values and path cells without checking.
        h.check(impl_->path + ": " + job_name(job_id) + ": heatmap " + h.label);
        result.push_back(std::move(h));
    }
    return result;
}

std::vector<LongPairStats> Project::long_pair_stats(std::int64_t job_id) const {
    std::vector<LongPairStats> result;
    auto rows = impl_->db->prepare(
        "SELECT query_id, target_id, query_length, target_length, device, kernel, strategy, kernels, streams, "
        "seconds, stage1_seconds, stage2_seconds, stage3_seconds, stage1_cells, stage2_cells, stage3_cells, "
        "special_rows, crossings, split_levels, base_segments FROM long_pair_stats WHERE job_id = ? ORDER BY ordinal");
    rows.bind(1, job_id);
    while (rows.step()) {
        LongPairStats s;
        s.query_id = rows.text(0);
        s.target_id = rows.text(1);
        s.query_length = rows.int64(2);
        s.target_length = rows.int64(3);
        s.device = rows.text(4);
        s.kernel = rows.text(5);
        s.strategy = rows.text(6);
        s.kernels = static_cast<int>(rows.int64(7));
        s.streams = static_cast<int>(rows.int64(8));
        s.seconds = rows.real(9);
        for (int k = 0; k < 3; ++k) {
            s.stage_seconds[static_cast<std::size_t>(k)] = rows.real(10 + k);
            s.stage_cells[static_cast<std::size_t>(k)] = rows.int64(13 + k);
        }
        s.special_rows = rows.int64(16);
        s.crossings = rows.int64(17);
        s.split_levels = static_cast<int>(rows.int64(18));
        s.base_segments = rows.int64(19);
        result.push_back(std::move(s));
    }
    return result;
}

}  // namespace alignscope::store
