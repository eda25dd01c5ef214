// Exporting a job's results from a project: alignments as JSON Lines, TSV or
// EMBOSS-like pair text (the same writers as the CLI, io/alignment_format.hpp),
// hits, long-alignment summaries and benchmark series as JSON Lines, TSV or CSV,
// and the timeline as a Chrome trace (Perfetto opens it).
#pragma once

#include <alignscope/device/job.hpp>

#include <cstdint>
#include <ostream>
#include <string_view>

namespace alignscope::store {

class Project;

enum class ExportFormat { Json, Tsv, Pair, ChromeTrace, Csv };
ExportFormat parse_export_format(std::string_view name);  // throws Error naming --format
std::string_view to_string(ExportFormat format);

// Which of a job's result tables to export. Auto: the timeline for
// chrome-trace, the alignments for pair; otherwise the first kind the job has
// of bench points (csv first), alignments, hits, long alignments, timeline.
enum class ExportTable { Auto, Alignments, Hits, LongAlignments, Timeline, Bench };
ExportTable parse_export_table(std::string_view name);  // throws Error naming --table
std::string_view to_string(ExportTable table);

// The table Auto resolves to for this job and format. Throws Error when the job
// has nothing that format can hold.
ExportTable resolve_export_table(const Project& project, std::int64_t job_id, ExportFormat format,
                                 ExportTable table = ExportTable::Auto);

// Writes the table to `out`, reading the project page by page (memory stays
// flat for millions of rows). Returns the number of rows written. Scores are in
// user units. Throws Error for a format the table cannot take (e.g. pair of hits),
// and Cancelled between pages once `cancel` is set.
std::int64_t export_job(const Project& project, std::int64_t job_id, ExportFormat format, std::ostream& out,
                        ExportTable table = ExportTable::Auto, const CancellationToken* cancel = nullptr);

}  // namespace alignscope::store
