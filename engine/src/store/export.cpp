// Exporting stored results. Alignments go through the CLI's own writers
// (io/alignment_format.hpp) so an export reads exactly like `align` output;
// the other tables through one small JSON Lines / TSV / CSV table writer.
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/store/export.hpp>
#include <alignscope/store/project.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <variant>

namespace alignscope::store {
namespace {

constexpr int kExportPage = 10'000;

struct RawJson {
    std::string text;  // a JSON value, written as is in JSON Lines and as text elsewhere
};
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, RawJson>;

std::string number_text(double value) {
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
    return ec == std::errc{} ? std::string(buffer, end) : std::string("nan");
}

double fraction(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? std::round(10000.0 * double(part) / double(whole)) / 10000.0 : 0.0;
}

class TableWriter {
public:
    virtual ~TableWriter() = default;
    virtual void header(const std::vector<std::string>& columns) { columns_ = columns; }
    virtual void row(const std::vector<Cell>& cells) = 0;

protected:
    std::vector<std::string> columns_;
};

class JsonLinesTable : public TableWriter {
public:
    explicit JsonLinesTable(std::ostream& out) : out_(out) {}
    void row(const std::vector<Cell>& cells) override {
        nlohmann::ordered_json j = nlohmann::ordered_json::object();
        for (std::size_t k = 0; k < cells.size(); ++k) {
            const std::string& key = columns_[k];
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::monostate>) j[key] = nullptr;
                    else if constexpr (std::is_same_v<T, RawJson>)
                        j[key] = nlohmann::ordered_json::parse(v.text);
                    else
                        j[key] = v;
                },
                cells[k]);
        }
        // Text read back from a damaged project may not be UTF-8: U+FFFD, not an exception.
        out_ << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    }

private:
    std::ostream& out_;
};

// TSV and CSV differ only in the separator and in how a field is protected.
class DelimitedTable : public TableWriter {
public:
    DelimitedTable(std::ostream& out, char separator) : out_(out), separator_(separator) {}
    void header(const std::vector<std::string>& columns) override {
        TableWriter::header(columns);
        for (std::size_t k = 0; k < columns.size(); ++k)
            out_ << (k ? std::string(1, separator_) : "") << field(columns[k]);
        out_ << '\n';
    }
    void row(const std::vector<Cell>& cells) override {
        for (std::size_t k = 0; k < cells.size(); ++k) {
            if (k) out_ << separator_;
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::monostate>) {
                    } else if constexpr (std::is_same_v<T, std::int64_t>)
                        out_ << v;
                    else if constexpr (std::is_same_v<T, double>)
                        out_ << number_text(v);
                    else if constexpr (std::is_same_v<T, RawJson>)
                        out_ << field(v.text);
                    else
                        out_ << field(v);
                },
                cells[k]);
        }
        out_ << '\n';
    }

private:
    std::string field(const std::string& text) const {
        if (separator_ == '\t') {
            // TSV has no quoting: a tab or line break inside a field (never in
            // sequence ids, possible in free text) becomes a space.
            std::string clean = text;
            for (char& c : clean)
                if (c == '\t' || c == '\n' || c == '\r') c = ' ';
            return clean;
        }
        // CSV after RFC 4180: quote a field holding a comma, quote or line break;
        // double the quotes inside.
        if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
        std::string quoted = "\"";
        for (char c : text) {
            if (c == '"') quoted += '"';
            quoted += c;
        }
        return quoted + '"';
    }

    std::ostream& out_;
    char separator_;
};

std::unique_ptr<TableWriter> table_writer(ExportFormat format, std::ostream& out) {
    switch (format) {
        case ExportFormat::Json: return std::make_unique<JsonLinesTable>(out);
        case ExportFormat::Tsv: return std::make_unique<DelimitedTable>(out, '\t');
        case ExportFormat::Csv: return std::make_unique<DelimitedTable>(out, ',');
        default: throw Error("internal: not a table format");
    }
}

// Pages through one result kind; `rows` turns each row into cells.
// A cancelled export (SIGTERM in the CLI) stops between pages, before the
// output is committed.
void between_pages(const CancellationToken* cancel) {
    if (cancel) cancel->throw_if_cancelled();
}

template <class Row, class Fetch, class Cells>
std::int64_t write_table(TableWriter& writer, const std::vector<std::string>& columns, Fetch&& fetch, Cells&& cells,
                         const CancellationToken* cancel) {
    writer.header(columns);
    std::int64_t written = 0;
    for (std::int64_t from = 0;;) {
        between_pages(cancel);
        const Page<Row> page = fetch(from);
        for (const Row& row : page.rows) writer.row(cells(row));
        written += static_cast<std::int64_t>(page.rows.size());
        if (!page.more) break;
        from = page.next();
    }
    return written;
}

ScoringScheme export_scheme(const JobInfo& job, ExportFormat format, const std::string& project) {
    if (job.spec.has_scheme()) return job.spec.scheme();
    if (format == ExportFormat::Pair)
        throw Error(project + ": job " + std::to_string(job.id) +
                    " has no recorded substitution matrix, which pair output needs; export json or tsv instead");
    ScoringScheme scale_only;  // JSON and TSV only convert scores to user units
    scale_only.scale = job.spec.score_scale > 0 ? job.spec.score_scale : 1;
    return scale_only;
}

std::int64_t export_alignments(const Project& project, const JobInfo& job, ExportFormat format, std::ostream& out,
                               const CancellationToken* cancel) {
    const ScoringScheme scheme = export_scheme(job, format, project.path());
    if (format == ExportFormat::Csv) {
        auto writer = table_writer(format, out);
        return write_table<Alignment>(
            *writer,
            {"query", "target", "score", "mode", "query_begin", "query_end", "target_begin", "target_end",
             "query_length", "target_length", "cigar", "identity", "similarity", "gaps", "length", "device", "kernel"},
            [&](std::int64_t from) { return project.alignments(job.id, from, kExportPage); },
            [&](const Alignment& a) {
                return std::vector<Cell>{a.query_id,
                                         a.target_id,
                                         scheme.to_user(a.score),
                                         std::string(to_string(a.mode)),
                                         a.query_begin,
                                         a.query_end,
                                         a.target_begin,
                                         a.target_end,
                                         a.query_length,
                                         a.target_length,
                                         a.cigar.to_string(),
                                         fraction(a.stats.identities, a.stats.length),
                                         fraction(a.stats.similarities, a.stats.length),
                                         a.stats.gaps,
                                         a.stats.length,
                                         a.device,
                                         a.kernel};
            },
            cancel);
    }
    const OutputFormat output = format == ExportFormat::Json  ? OutputFormat::Json
                                : format == ExportFormat::Tsv ? OutputFormat::Tsv
                                                              : OutputFormat::Pair;
    WriterContext context;
    context.program = "alignscope-cli project export";
    context.command_line = job.spec.command_line;
    context.scheme = scheme;
    auto writer = AlignmentWriter::create(output, out, std::move(context));
    writer->begin();
    std::int64_t written = 0;
    Sequence query, target;  // the writers used here need only the ids, which the alignment carries
    for (std::int64_t from = 0;;) {
        between_pages(cancel);
        const Page<Alignment> page = project.alignments(job.id, from, kExportPage);
        for (const Alignment& a : page.rows) {
            query.id = a.query_id;
            target.id = a.target_id;
            writer->write(a, query, target);
        }
        written += static_cast<std::int64_t>(page.rows.size());
        if (!page.more) break;
        from = page.next();
    }
    writer->end();
    return written;
}

std::int64_t export_timeline_trace(const Project& project, const JobInfo& job, std::ostream& out,
                                   const CancellationToken* cancel) {
    std::vector<TimelineEvent> events;
    // The jobs row's counter is a hint (a damaged file may hold anything there): at most 1 Mi events up front.
    events.reserve(static_cast<std::size_t>(std::clamp<std::int64_t>(job.counts.timeline_events, 0, 1 << 20)));
    for (std::int64_t from = 0;;) {
        between_pages(cancel);
        Page<TimelineEvent> page = project.timeline(job.id, from, kExportPage);
        for (auto& e : page.rows) events.push_back(std::move(e));
        if (!page.more) break;
        from = page.next();
    }
    write_chrome_trace(out, events, job.clock_source.empty() ? "steady-clock" : job.clock_source);
    return static_cast<std::int64_t>(events.size());
}

std::int64_t count_of(const JobInfo& job, ExportTable table) {
    switch (table) {
        case ExportTable::Alignments: return job.counts.alignments;
        case ExportTable::Hits: return job.counts.hits;
        case ExportTable::LongAlignments: return job.counts.long_alignments;
        case ExportTable::Timeline: return job.counts.timeline_events;
        case ExportTable::Bench: return job.counts.bench_points;
        case ExportTable::Auto: return 0;
    }
    return 0;
}

}  // namespace

ExportFormat parse_export_format(std::string_view name) {
    if (name == "json" || name == "jsonl") return ExportFormat::Json;
    if (name == "tsv") return ExportFormat::Tsv;
    if (name == "pair") return ExportFormat::Pair;
    if (name == "chrome-trace" || name == "trace") return ExportFormat::ChromeTrace;
    if (name == "csv") return ExportFormat::Csv;
    throw Error("--format: unknown export format '" + std::string(name) +
                "' (expected json, tsv, pair, chrome-trace or csv)");
}

std::string_view to_string(ExportFormat format) {
    switch (format) {
        case ExportFormat::Json: return "json";
        case ExportFormat::Tsv: return "tsv";
        case ExportFormat::Pair: return "pair";
        case ExportFormat::ChromeTrace: return "chrome-trace";
        case ExportFormat::Csv: return "csv";
    }
    return "json";
}

ExportTable parse_export_table(std::string_view name) {
    if (name == "auto") return ExportTable::Auto;
    if (name == "alignments") return ExportTable::Alignments;
    if (name == "hits") return ExportTable::Hits;
    if (name == "long-alignments") return ExportTable::LongAlignments;
    if (name == "timeline") return ExportTable::Timeline;
    if (name == "bench") return ExportTable::Bench;
    throw Error("--table: unknown result table '" + std::string(name) +
                "' (expected auto, alignments, hits, long-alignments, timeline or bench)");
}

std::string_view to_string(ExportTable table) {
    switch (table) {
        case ExportTable::Auto: return "auto";
        case ExportTable::Alignments: return "alignments";
        case ExportTable::Hits: return "hits";
        case ExportTable::LongAlignments: return "long-alignments";
        case ExportTable::Timeline: return "timeline";
        case ExportTable::Bench: return "bench";
    }
    return "auto";
}

ExportTable resolve_export_table(const Project& project, std::int64_t job_id, ExportFormat format, ExportTable table) {
    const JobInfo job = project.job(job_id);
    const std::string who = project.path() + ": job " + std::to_string(job_id);
    if (format == ExportFormat::ChromeTrace) {
        if (table != ExportTable::Auto && table != ExportTable::Timeline)
            throw Error("--format chrome-trace holds the timeline only, not " + std::string(to_string(table)));
        if (job.counts.timeline_events == 0) throw Error(who + " has no timeline events");
        return ExportTable::Timeline;
    }
    if (format == ExportFormat::Pair) {
        if (table != ExportTable::Auto && table != ExportTable::Alignments)
            throw Error("--format pair holds alignments only, not " + std::string(to_string(table)));
        if (job.counts.alignments == 0) throw Error(who + " has no alignments");
        return ExportTable::Alignments;
    }
    if (table != ExportTable::Auto) return table;
    const std::vector<ExportTable> preference =
        format == ExportFormat::Csv
            ? std::vector<ExportTable>{ExportTable::Bench, ExportTable::Hits, ExportTable::Alignments,
                                       ExportTable::LongAlignments, ExportTable::Timeline}
            : std::vector<ExportTable>{ExportTable::Alignments, ExportTable::Hits, ExportTable::LongAlignments,
                                       ExportTable::Bench, ExportTable::Timeline};
    for (ExportTable candidate : preference)
        if (count_of(job, candidate) > 0) return candidate;
    throw Error(who + " has no results to export");
}

std::int64_t export_job(const Project& project, std::int64_t job_id, ExportFormat format, std::ostream& out,
                        ExportTable table, const CancellationToken* cancel) {
    const JobInfo job = project.job(job_id);
    table = resolve_export_table(project, job_id, format, table);
    const double scale = job.spec.score_scale > 0 ? job.spec.score_scale : 1;
    switch (table) {
        case ExportTable::Alignments: return export_alignments(project, job, format, out, cancel);
        case ExportTable::Timeline:
            if (format == ExportFormat::ChromeTrace) return export_timeline_trace(project, job, out, cancel);
            {
                auto writer = table_writer(format, out);
                return write_table<TimelineEvent>(
                    *writer, {"name", "category", "device", "lane", "start_ns", "end_ns", "bytes", "cells"},
                    [&](std::int64_t from) { return project.timeline(job_id, from, kExportPage); },
                    [](const TimelineEvent& e) {
                        return std::vector<Cell>{e.name,
                                                 e.category,
                                                 e.device,
                                                 std::int64_t{e.lane},
                                                 e.start_ns,
                                                 e.end_ns,
                                                 static_cast<std::int64_t>(e.bytes),
                                                 static_cast<std::int64_t>(e.cells)};
                    },
                    cancel);
            }
        case ExportTable::Hits: {
            auto writer = table_writer(format, out);
            return write_table<Hit>(
                *writer,
                {"query", "target", "rank", "score", "bits", "evalue", "query_begin", "query_end", "target_begin",
                 "target_end", "query_length", "target_length"},
                [&](std::int64_t from) { return project.hits(job_id, from, kExportPage); },
                [scale](const Hit& h) {
                    const auto optional = [](const std::optional<double>& v) { return v ? Cell(*v) : Cell(); };
                    return std::vector<Cell>{h.query_id,       h.target_id,
                                             h.rank,           double(h.score) / scale,
                                             optional(h.bits), optional(h.evalue),
                                             h.query_begin,    h.query_end,
                                             h.target_begin,   h.target_end,
                                             h.query_length,   h.target_length};
                },
                cancel);
        }
        case ExportTable::LongAlignments: {
            auto writer = table_writer(format, out);
            return write_table<LongAlignmentSummary>(
                *writer,
                {"query", "target", "score", "mode", "query_begin", "query_end", "target_begin", "target_end",
                 "query_length", "target_length", "identity", "similarity", "gaps", "length", "alignment_path",
                 "alignment_format", "device", "kernel", "seconds"},
                [&](std::int64_t from) { return project.long_alignments(job_id, from, kExportPage); },
                [scale](const LongAlignmentSummary& s) {
                    return std::vector<Cell>{s.query_id,
                                             s.target_id,
                                             double(s.score) / scale,
                                             std::string(to_string(s.mode)),
                                             s.query_begin,
                                             s.query_end,
                                             s.target_begin,
                                             s.target_end,
                                             s.query_length,
                                             s.target_length,
                                             fraction(s.stats.identities, s.stats.length),
                                             fraction(s.stats.similarities, s.stats.length),
                                             s.stats.gaps,
                                             s.stats.length,
                                             s.alignment_path,
                                             s.alignment_format,
                                             s.device,
                                             s.kernel,
                                             s.seconds};
                },
                cancel);
        }
        case ExportTable::Bench: {
            auto writer = table_writer(format, out);
            return write_table<BenchPoint>(
                *writer, {"series", "device", "x", "y", "x_label", "y_label", "parameters"},
                [&](std::int64_t from) { return project.bench_points(job_id, from, kExportPage); },
                [](const BenchPoint& p) {
                    return std::vector<Cell>{p.series,
                                             p.device,
                                             p.x,
                                             p.y,
                                             p.x_label,
                                             p.y_label,
                                             RawJson{
                                                 nlohmann::json(p.parameters)
                                                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)}};
                },
                cancel);
        }
        case ExportTable::Auto: break;
    }
    throw Error("internal: unresolved export table");
}

}  // namespace alignscope::store
