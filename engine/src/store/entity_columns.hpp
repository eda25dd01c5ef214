// The column table of each result the store keeps for a job: alignments, hits,
// timeline events, long alignments, benchmark points, heatmaps and long-pair
// statistics. The recorder writes rows and the paged readers read them through
// these tables (after the job_id and ordinal columns every result table has).
#pragma once

#include "columns.hpp"

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/store/results.hpp>

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace alignscope::store::entity {

using columns::Column;
using columns::field;

// Heatmap blobs: little-endian 32-bit floats, (row, column) pairs of 32-bit
// ints, and 64-bit ints.
inline void append_u32(std::vector<std::uint8_t>& out, std::uint32_t bits) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(bits >> (8 * b)));
}
inline std::uint32_t u32_at(const std::vector<std::uint8_t>& blob, std::size_t at) {
    std::uint32_t bits = 0;
    for (int b = 3; b >= 0; --b) bits = (bits << 8) | blob[at + static_cast<std::size_t>(b)];
    return bits;
}

inline std::vector<std::uint8_t> floats_blob(const std::vector<float>& values) {
    std::vector<std::uint8_t> out;
    out.reserve(4 * values.size());
    for (float v : values) append_u32(out, std::bit_cast<std::uint32_t>(v));
    return out;
}
inline std::vector<float> floats_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<float> values(blob.size() / 4);
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::bit_cast<float>(u32_at(blob, 4 * k));
    return values;
}

inline std::vector<std::uint8_t> cells_blob(const std::vector<std::pair<int, int>>& cells) {
    std::vector<std::uint8_t> out;
    out.reserve(8 * cells.size());
    for (const auto& [row, col] : cells) {
        append_u32(out, static_cast<std::uint32_t>(row));
        append_u32(out, static_cast<std::uint32_t>(col));
    }
    return out;
}
inline std::vector<std::pair<int, int>> cells_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<std::pair<int, int>> cells(blob.size() / 8);
    auto word = [&blob](std::size_t at) { return static_cast<int>(static_cast<std::int32_t>(u32_at(blob, at))); };
    for (std::size_t k = 0; k < cells.size(); ++k) cells[k] = {word(8 * k), word(8 * k + 4)};
    return cells;
}

inline std::vector<std::uint8_t> int64s_blob(const std::vector<std::int64_t>& values) {
    std::vector<std::uint8_t> out;
    out.reserve(8 * values.size());
    for (std::int64_t e : values) {
        append_u32(out, static_cast<std::uint32_t>(static_cast<std::uint64_t>(e)));
        append_u32(out, static_cast<std::uint32_t>(static_cast<std::uint64_t>(e) >> 32));
    }
    return out;
}
inline std::vector<std::int64_t> int64s_from_blob(const std::vector<std::uint8_t>& blob) {
    std::vector<std::int64_t> values(blob.size() / 8);
    for (std::size_t k = 0; k < values.size(); ++k)
        values[k] = static_cast<std::int64_t>(std::uint64_t{u32_at(blob, 8 * k)} |
                                              (std::uint64_t{u32_at(blob, 8 * k + 4)} << 32));
    return values;
}

inline void bind_bytes(sqlite::Statement& s, int i, const std::vector<std::uint8_t>& bytes) {
    s.bind_blob(i, bytes.data(), bytes.size());
}

// A column of the alignment statistics, for the rows that carry them in `stats`.
template <class Row, std::int64_t AlignmentStats::*Member>
constexpr Column<Row> stats_field(std::string_view name) {
    return {name, [](const sqlite::Statement& s, int i, Row& row) { row.stats.*Member = s.int64(i); },
            [](sqlite::Statement& s, int i, const Row& row) { s.bind(i, row.stats.*Member); }};
}

// A column of kernel names (one, or the several a search ran, joined by
// commas): written as given, read in today's words (read_stored_kernel_names),
// so a project an earlier version wrote shows the names of today.
template <class Row, std::string Row::*Member>
constexpr Column<Row> kernel_field(std::string_view name) {
    return {name,
            [](const sqlite::Statement& s, int i, Row& row) { row.*Member = read_stored_kernel_names(s.text(i)); },
            [](sqlite::Statement& s, int i, const Row& row) { s.bind(i, row.*Member); }};
}

inline constexpr std::array<Column<Alignment>, 20> alignment_columns{{
    field<&Alignment::query_id>("query_id"),
    field<&Alignment::target_id>("target_id"),
    field<&Alignment::mode>("mode"),
    field<&Alignment::score>("score"),
    field<&Alignment::query_begin>("query_begin"),
    field<&Alignment::query_end>("query_end"),
    field<&Alignment::target_begin>("target_begin"),
    field<&Alignment::target_end>("target_end"),
    field<&Alignment::query_length>("query_length"),
    field<&Alignment::target_length>("target_length"),
    {"cigar",
     [](const sqlite::Statement& s, int i, Alignment& a) {
         const std::string cigar = s.text(i);
         if (!cigar.empty()) a.cigar = Cigar::parse(cigar);
     },
     [](sqlite::Statement& s, int i, const Alignment& a) { s.bind(i, a.cigar.to_string()); }},
    field<&Alignment::query_aligned>("query_aligned"),
    field<&Alignment::target_aligned>("target_aligned"),
    stats_field<Alignment, &AlignmentStats::length>("length"),
    stats_field<Alignment, &AlignmentStats::identities>("identities"),
    stats_field<Alignment, &AlignmentStats::similarities>("similarities"),
    stats_field<Alignment, &AlignmentStats::gaps>("gaps"),
    stats_field<Alignment, &AlignmentStats::gap_opens>("gap_opens"),
    field<&Alignment::device>("device"),
    kernel_field<Alignment, &Alignment::kernel>("kernel"),
}};

inline constexpr std::array<Column<Hit>, 12> hit_columns{{
    field<&Hit::query_id>("query_id"),
    field<&Hit::target_id>("target_id"),
    field<&Hit::rank>("rank"),
    field<&Hit::score>("score"),
    field<&Hit::bits>("bits"),
    field<&Hit::evalue>("evalue"),
    field<&Hit::query_begin>("query_begin"),
    field<&Hit::query_end>("query_end"),
    field<&Hit::target_begin>("target_begin"),
    field<&Hit::target_end>("target_end"),
    field<&Hit::query_length>("query_length"),
    field<&Hit::target_length>("target_length"),
}};

inline constexpr std::array<Column<TimelineEvent>, 8> timeline_columns{{
    kernel_field<TimelineEvent, &TimelineEvent::name>("name"),  // a kernel's, or a copy's ("H2D")
    field<&TimelineEvent::category>("category"),
    field<&TimelineEvent::device>("device"),
    field<&TimelineEvent::lane>("lane"),
    field<&TimelineEvent::start_ns>("start_ns"),
    field<&TimelineEvent::end_ns>("end_ns"),
    field<&TimelineEvent::bytes>("bytes"),
    field<&TimelineEvent::cells>("cells"),
}};

inline constexpr std::array<Column<LongAlignmentSummary>, 20> long_alignment_columns{{
    field<&LongAlignmentSummary::query_id>("query_id"),
    field<&LongAlignmentSummary::target_id>("target_id"),
    field<&LongAlignmentSummary::mode>("mode"),
    field<&LongAlignmentSummary::score>("score"),
    field<&LongAlignmentSummary::query_begin>("query_begin"),
    field<&LongAlignmentSummary::query_end>("query_end"),
    field<&LongAlignmentSummary::target_begin>("target_begin"),
    field<&LongAlignmentSummary::target_end>("target_end"),
    field<&LongAlignmentSummary::query_length>("query_length"),
    field<&LongAlignmentSummary::target_length>("target_length"),
    stats_field<LongAlignmentSummary, &AlignmentStats::length>("length"),
    stats_field<LongAlignmentSummary, &AlignmentStats::identities>("identities"),
    stats_field<LongAlignmentSummary, &AlignmentStats::similarities>("similarities"),
    stats_field<LongAlignmentSummary, &AlignmentStats::gaps>("gaps"),
    stats_field<LongAlignmentSummary, &AlignmentStats::gap_opens>("gap_opens"),
    field<&LongAlignmentSummary::alignment_path>("alignment_path"),
    field<&LongAlignmentSummary::alignment_format>("alignment_format"),
    field<&LongAlignmentSummary::device>("device"),
    kernel_field<LongAlignmentSummary, &LongAlignmentSummary::kernel>("kernel"),
    field<&LongAlignmentSummary::seconds>("seconds"),
}};

// The parameters (a JSON object of strings) follow these: the reader names
// the project when they do not parse, the writer checks x and y first.
inline constexpr std::array<Column<BenchPoint>, 6> bench_point_columns{{
    field<&BenchPoint::series>("series"),
    field<&BenchPoint::device>("device"),
    field<&BenchPoint::x>("x"),
    field<&BenchPoint::y>("y"),
    field<&BenchPoint::x_label>("x_label"),
    field<&BenchPoint::y_label>("y_label"),
}};

inline constexpr std::array<Column<Heatmap>, 11> heatmap_columns{{
    field<&Heatmap::label>("label"),
    field<&Heatmap::query_id>("query_id"),
    field<&Heatmap::target_id>("target_id"),
    field<&Heatmap::source_rows>("source_rows"),
    field<&Heatmap::source_cols>("source_cols"),
    field<&Heatmap::rows>("rows"),
    field<&Heatmap::cols>("cols"),
    {"cell_values", [](const sqlite::Statement& s, int i, Heatmap& h) { h.values = floats_from_blob(s.blob(i)); },
     [](sqlite::Statement& s, int i, const Heatmap& h) { bind_bytes(s, i, floats_blob(h.values)); }},
    {"path_cells", [](const sqlite::Statement& s, int i, Heatmap& h) { h.path = cells_from_blob(s.blob(i)); },
     [](sqlite::Statement& s, int i, const Heatmap& h) { bind_bytes(s, i, cells_blob(h.path)); }},
    {"row_edges", [](const sqlite::Statement& s, int i, Heatmap& h) { h.row_edges = int64s_from_blob(s.blob(i)); },
     [](sqlite::Statement& s, int i, const Heatmap& h) { bind_bytes(s, i, int64s_blob(h.row_edges)); }},
    {"col_edges", [](const sqlite::Statement& s, int i, Heatmap& h) { h.col_edges = int64s_from_blob(s.blob(i)); },
     [](sqlite::Statement& s, int i, const Heatmap& h) { bind_bytes(s, i, int64s_blob(h.col_edges)); }},
}};

// Stage k (0-2) of the long-pair pipeline: its seconds and its cells.
template <std::size_t Stage>
constexpr Column<LongPairStats> stage_seconds(std::string_view name) {
    return {name, [](const sqlite::Statement& s, int i, LongPairStats& row) { row.stage_seconds[Stage] = s.real(i); },
            [](sqlite::Statement& s, int i, const LongPairStats& row) { s.bind(i, row.stage_seconds[Stage]); }};
}
template <std::size_t Stage>
constexpr Column<LongPairStats> stage_cells(std::string_view name) {
    return {name, [](const sqlite::Statement& s, int i, LongPairStats& row) { row.stage_cells[Stage] = s.int64(i); },
            [](sqlite::Statement& s, int i, const LongPairStats& row) { s.bind(i, row.stage_cells[Stage]); }};
}

inline constexpr std::array<Column<LongPairStats>, 20> long_pair_stats_columns{{
    field<&LongPairStats::query_id>("query_id"),
    field<&LongPairStats::target_id>("target_id"),
    field<&LongPairStats::query_length>("query_length"),
    field<&LongPairStats::target_length>("target_length"),
    field<&LongPairStats::device>("device"),
    kernel_field<LongPairStats, &LongPairStats::kernel>("kernel"),
    field<&LongPairStats::strategy>("strategy"),
    field<&LongPairStats::kernels>("kernels"),
    field<&LongPairStats::streams>("streams"),
    field<&LongPairStats::seconds>("seconds"),
    stage_seconds<0>("stage1_seconds"),
    stage_seconds<1>("stage2_seconds"),
    stage_seconds<2>("stage3_seconds"),
    stage_cells<0>("stage1_cells"),
    stage_cells<1>("stage2_cells"),
    stage_cells<2>("stage3_cells"),
    field<&LongPairStats::special_rows>("special_rows"),
    field<&LongPairStats::crossings>("crossings"),
    field<&LongPairStats::split_levels>("split_levels"),
    field<&LongPairStats::base_segments>("base_segments"),
}};

}  // namespace alignscope::store::entity
