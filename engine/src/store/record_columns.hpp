// The column tables of the project's own records, jobs and inputs (the
// results a job holds are in entity_columns.hpp): each column of the jobs and
// inputs tables named once, with how it is read into JobInfo or InputInfo and
// bound from it, so the SELECT lists, the INSERTs and their binds all come
// from one place.
#pragma once

#include "columns.hpp"

#include <alignscope/seq/sequence.hpp>
#include <alignscope/store/project.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace alignscope::store::entity {

using columns::Column;
using columns::field;

// The position of column `name` in a table (for a column read apart from the
// others); a name the table does not have is a compile-time error.
template <class Row, std::size_t N>
constexpr int column_index(const std::array<Column<Row>, N>& table, std::string_view name) {
    for (std::size_t k = 0; k < N; ++k)
        if (table[k].name == name) return static_cast<int>(k);
    throw "no such column";
}

// A row id: NULL when the row is new (0), so that SQLite gives it the next one.
template <class Row>
constexpr Column<Row> row_id() {
    return {"id", [](const sqlite::Statement& s, int i, Row& row) { row.id = s.int64(i); },
            [](sqlite::Statement& s, int i, const Row& row) {
                if (row.id == 0) s.bind_null(i);
                else
                    s.bind(i, row.id);
            }};
}

// A time in ms since the epoch that may not have come yet: NULL for 0 ("not yet").
template <std::int64_t JobInfo::*Member>
constexpr Column<JobInfo> moment(std::string_view name) {
    return {name, [](const sqlite::Statement& s, int i, JobInfo& row) { row.*Member = s.int64(i); },
            [](sqlite::Statement& s, int i, const JobInfo& row) {
                if (row.*Member == 0) s.bind_null(i);
                else
                    s.bind(i, row.*Member);
            }};
}

// A column kept beside the spec's JSON for whoever queries the file with SQL
// (which command, which devices): written from the spec, read back through
// the JSON, which holds it too.
template <class Field, Field JobSpec::*Member>
constexpr Column<JobInfo> spec_copy(std::string_view name) {
    return {name, [](const sqlite::Statement&, int, JobInfo&) {},
            [](sqlite::Statement& s, int i, const JobInfo& row) { columns::put(s, i, row.spec.*Member); }};
}

template <std::uint64_t Progress::*Member>
constexpr Column<JobInfo> progress_field(std::string_view name) {
    return {name,
            [](const sqlite::Statement& s, int i, JobInfo& row) {
                row.progress.*Member = static_cast<std::uint64_t>(s.int64(i));
            },
            [](sqlite::Statement& s, int i, const JobInfo& row) { s.bind(i, row.progress.*Member); }};
}

template <std::int64_t ResultCounts::*Member>
constexpr Column<JobInfo> count_field(std::string_view name) {
    return {name, [](const sqlite::Statement& s, int i, JobInfo& row) { row.counts.*Member = s.int64(i); },
            [](sqlite::Statement& s, int i, const JobInfo& row) { s.bind(i, row.counts.*Member); }};
}

// A job. Its spec column (JSON) is read apart from the row, by the reader that
// can name the job and the project when it does not parse (kJobSpecColumn).
inline constexpr std::array<Column<JobInfo>, 32> job_columns{{
    row_id<JobInfo>(),
    spec_copy<std::string, &JobSpec::command>("command"),
    spec_copy<std::string, &JobSpec::algorithm>("algorithm"),
    spec_copy<std::string, &JobSpec::mode>("mode"),
    spec_copy<std::string, &JobSpec::scoring>("scoring"),
    spec_copy<int, &JobSpec::score_scale>("score_scale"),
    spec_copy<std::string, &JobSpec::devices>("devices"),
    spec_copy<int, &JobSpec::streams>("streams"),
    spec_copy<int, &JobSpec::threads>("threads"),
    spec_copy<std::string, &JobSpec::kernel>("kernel"),
    spec_copy<std::string, &JobSpec::build_version>("build_version"),
    spec_copy<std::string, &JobSpec::driver_version>("driver_version"),
    {"spec", [](const sqlite::Statement&, int, JobInfo&) {},
     [](sqlite::Statement& s, int i, const JobInfo& row) { s.bind(i, row.spec.to_json()); }},
    {"state", [](const sqlite::Statement& s, int i, JobInfo& row) { row.state = parse_job_state(s.text(i)); },
     [](sqlite::Statement& s, int i, const JobInfo& row) { s.bind(i, to_string(row.state)); }},
    moment<&JobInfo::created_ms>("created_ms"),
    moment<&JobInfo::started_ms>("started_ms"),
    moment<&JobInfo::ended_ms>("ended_ms"),
    field<&JobInfo::error>("error"),
    progress_field<&Progress::cells_done>("cells_done"),
    progress_field<&Progress::cells_total>("cells_total"),
    progress_field<&Progress::items_done>("items_done"),
    progress_field<&Progress::items_total>("items_total"),
    field<&JobInfo::owner_pid>("owner_pid"),
    field<&JobInfo::owner_host>("owner_host"),
    field<&JobInfo::clock_source>("clock_source"),
    count_field<&ResultCounts::alignments>("alignment_count"),
    count_field<&ResultCounts::hits>("hit_count"),
    count_field<&ResultCounts::long_alignments>("long_alignment_count"),
    count_field<&ResultCounts::heatmaps>("heatmap_count"),
    count_field<&ResultCounts::timeline_events>("timeline_event_count"),
    count_field<&ResultCounts::bench_points>("bench_point_count"),
    count_field<&ResultCounts::long_pair_stats>("long_pair_stats_count"),
}};
inline constexpr int kJobSpecColumn = column_index(job_columns, "spec");

// An input (sequence set or profile). Its content (the embedded profile
// file, a blob) is bound after these by the writer and read on its own.
inline constexpr std::array<Column<InputInfo>, 11> input_columns{{
    row_id<InputInfo>(),
    {"kind",
     [](const sqlite::Statement& s, int i, InputInfo& row) {
         row.kind = s.text(i) == to_string(InputKind::Profile) ? InputKind::Profile : InputKind::SequenceSet;
     },
     [](sqlite::Statement& s, int i, const InputInfo& row) { s.bind(i, to_string(row.kind)); }},
    field<&InputInfo::path>("path"),
    field<&InputInfo::size_bytes>("size_bytes"),
    field<&InputInfo::mtime_ns>("mtime_ns"),
    field<&InputInfo::sha256>("sha256"),
    field<&InputInfo::alphabet>("alphabet"),
    field<&InputInfo::record_count>("record_count"),
    field<&InputInfo::residue_count>("residue_count"),
    {"embedded", [](const sqlite::Statement& s, int i, InputInfo& row) { row.embedded = s.int64(i) != 0; },
     [](sqlite::Statement& s, int i, const InputInfo& row) { s.bind(i, row.embedded ? 1 : 0); }},
    field<&InputInfo::added_ms>("added_ms"),
}};

// A record of an embedded sequence set (input_sequences, after the input_id
// and ordinal columns).
inline constexpr std::array<Column<Sequence>, 4> input_sequence_columns{{
    field<&Sequence::id>("name"),
    field<&Sequence::description>("description"),
    field<&Sequence::residues>("residues"),
    field<&Sequence::quality>("quality"),
}};

}  // namespace alignscope::store::entity
