// Alignment writers: pair (EMBOSS srspair-like), JSON Lines, TSV, SAM.
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>

#include "alignment_format_detail.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <type_traits>

namespace alignscope {

OutputFormat parse_output_format(std::string_view name) {
    if (name == "pair") return OutputFormat::Pair;
    if (name == "json" || name == "jsonl") return OutputFormat::Json;
    if (name == "tsv") return OutputFormat::Tsv;
    if (name == "sam") return OutputFormat::Sam;
    throw Error::about("format", "unknown format '" + std::string(name) + "' (expected pair, json, tsv or sam)");
}

std::string_view to_string(OutputFormat format) {
    switch (format) {
        case OutputFormat::Pair: return "pair";
        case OutputFormat::Json: return "json";
        case OutputFormat::Tsv: return "tsv";
        case OutputFormat::Sam: return "sam";
    }
    return "pair";
}

std::string format_score(double user_score) {
    char buffer[64];
    if (user_score == std::floor(user_score) && std::fabs(user_score) < 1e15)
        std::snprintf(buffer, sizeof buffer, "%.0f", user_score);
    else
        std::snprintf(buffer, sizeof buffer, "%.1f", user_score);
    return buffer;
}

void write_sam_references(std::ostream& out, const std::vector<const Sequence*>& references) {
    for (const Sequence* r : references) out << "@SQ\tSN:" << r->id << "\tLN:" << r->residues.size() << '\n';
}

std::string markup_line(std::string_view query_aligned, std::string_view target_aligned, const ScoringScheme& scheme) {
    std::string line(query_aligned.size(), ' ');
    for (std::size_t k = 0; k < query_aligned.size() && k < target_aligned.size(); ++k)
        line[k] = detail::markup_char(query_aligned[k], target_aligned[k], scheme.matrix);
    return line;
}

namespace {

double fraction(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? std::round(10000.0 * double(part) / double(whole)) / 10000.0 : 0.0;
}

// A TSV or SAM line is built in a string and written at once: a stream's
// operator<< goes through its locale for every number, which made formatting
// a million lines cost more than aligning them. The text is the same: whole
// numbers in decimal, other doubles as a default stream writes them (%g, six
// significant digits).
template <typename Integer>
void append_number(std::string& line, Integer value) {
    static_assert(std::is_integral_v<Integer>);
    char buffer[24];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    line.append(buffer, end);
}

void append_double(std::string& line, double value) {
    char buffer[32];
    const auto [end, status] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 6);
    line.append(buffer, status == std::errc() ? end : buffer);
}

// The CIGAR as Cigar::to_string writes it, run by run into the line.
void append_cigar(std::string& line, const Cigar& cigar) {
    for (const CigarOp& run : cigar.ops()) {
        append_number(line, run.length);
        line += run.op;
    }
}

// A score as format_score writes it, whole scores without snprintf.
void append_score(std::string& line, double user_score) {
    if (user_score == std::floor(user_score) && std::fabs(user_score) < 1e15 && !std::signbit(user_score))
        append_number(line, static_cast<long long>(user_score));
    else
        line += format_score(user_score);
}

}  // namespace

namespace detail {

void write_pair_preamble(std::ostream& out, const WriterContext& ctx) {
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%a %d %b %Y %H:%M:%S", std::localtime(&now));
    out << "########################################\n"
        << "# Program: " << ctx.program << "\n"
        << "# Rundate: " << date << "\n";
    if (!ctx.command_line.empty()) out << "# Commandline: " << ctx.command_line << "\n";
    out << "# Align_format: pair\n"
        << "########################################\n";
}

void write_pair_header(std::ostream& out, const Alignment& a, const ScoringScheme& s, const AlignmentExtras& extras,
                       bool traceback) {
    auto pct = [](std::int64_t part, std::int64_t whole) {
        char b[32];
        std::snprintf(b, sizeof b, "%5.1f%%", whole ? 100.0 * double(part) / double(whole) : 0.0);
        return std::string(b);
    };
    out << "\n#=======================================\n#\n"
        << "# Aligned_sequences: 2\n"
        << "# 1: " << a.query_id << "\n"
        << "# 2: " << a.target_id << "\n"
        << "# Mode: " << to_string(a.mode) << "\n"
        << "# Matrix: " << s.matrix.name() << "\n"
        << "# Gap_penalty: " << format_score(s.to_user(s.gap_open)) << "\n"
        << "# Extend_penalty: " << format_score(s.to_user(s.gap_extend)) << "\n#\n";
    if (traceback) {
        const auto& st = a.stats;
        out << "# Length: " << st.length << "\n"
            << "# Identity:   " << st.identities << "/" << st.length << " (" << pct(st.identities, st.length) << ")\n"
            << "# Similarity: " << st.similarities << "/" << st.length << " (" << pct(st.similarities, st.length)
            << ")\n"
            << "# Gaps:       " << st.gaps << "/" << st.length << " (" << pct(st.gaps, st.length) << ")\n";
    }
    out << "# Score: " << format_score(s.to_user(a.score)) << "\n";
    if (extras.rank) out << "# Rank: " << *extras.rank << "\n";
    if (extras.bits) out << "# Bits: " << *extras.bits << "\n";
    if (extras.evalue) out << "# E-value: " << *extras.evalue << "\n";
    out << "# Query: " << a.query_begin << "-" << a.query_end << " of " << a.query_length << "\n"
        << "# Target: " << a.target_begin << "-" << a.target_end << " of " << a.target_length << "\n"
        << "# Device: " << a.device << (a.kernel.empty() ? "" : " (" + a.kernel + ")") << "\n"
        << "#\n#=======================================\n\n";
}

nlohmann::json alignment_json(const Alignment& a, const ScoringScheme& s, const AlignmentExtras& extras) {
    nlohmann::json j;
    j["query"] = a.query_id;
    j["target"] = a.target_id;
    j["score"] = s.to_user(a.score);
    j["mode"] = std::string(to_string(a.mode));
    j["query_begin"] = a.query_begin;
    j["query_end"] = a.query_end;
    j["target_begin"] = a.target_begin;
    j["target_end"] = a.target_end;
    j["query_length"] = a.query_length;
    j["target_length"] = a.target_length;
    j["cigar"] = a.cigar.to_string();
    j["identity"] = fraction(a.stats.identities, a.stats.length);
    j["similarity"] = fraction(a.stats.similarities, a.stats.length);
    j["gaps"] = a.stats.gaps;
    j["length"] = a.stats.length;
    j["device"] = a.device;
    j["kernel"] = a.kernel;
    if (extras.rank) j["rank"] = *extras.rank;
    if (extras.bits) j["bits"] = *extras.bits;
    if (extras.evalue) j["evalue"] = *extras.evalue;
    if (extras.db_size) j["db_size"] = *extras.db_size;
    return j;
}

}  // namespace detail

namespace {

class PairWriter : public AlignmentWriter {
public:
    PairWriter(std::ostream& out, WriterContext context) : out_(out), ctx_(std::move(context)) {}

    void begin() override { detail::write_pair_preamble(out_, ctx_); }

    void write(const Alignment& a, const Sequence&, const Sequence&, const AlignmentExtras& extras) override {
        detail::write_pair_header(out_, a, ctx_.scheme, extras, a.has_traceback());
        if (!a.has_traceback()) return;
        write_blocks(a);
    }

private:
    void write_blocks(const Alignment& a) {
        const std::string markup = markup_line(a.query_aligned, a.target_aligned, ctx_.scheme);
        const std::size_t width = 50;
        std::int64_t qpos = a.query_begin, tpos = a.target_begin;
        auto name = [](const std::string& id) {
            std::string n = id.substr(0, 13);
            n.resize(13, ' ');
            return n;
        };
        for (std::size_t off = 0; off < a.query_aligned.size(); off += width) {
            const std::size_t len = std::min(width, a.query_aligned.size() - off);
            const std::string qs = a.query_aligned.substr(off, len), ts = a.target_aligned.substr(off, len);
            const auto residues = [](const std::string& s) {
                return std::int64_t(std::count_if(s.begin(), s.end(), [](char c) { return c != '-'; }));
            };
            const std::int64_t qn = residues(qs), tn = residues(ts);
            char line[128];
            std::snprintf(line, sizeof line, "%s %6lld ", name(a.query_id).c_str(), static_cast<long long>(qpos));
            out_ << line << qs << " " << std::setw(6) << (qn ? qpos + qn - 1 : qpos - 1) << "\n";
            out_ << std::string(21, ' ') << markup.substr(off, len) << "\n";
            std::snprintf(line, sizeof line, "%s %6lld ", name(a.target_id).c_str(), static_cast<long long>(tpos));
            out_ << line << ts << " " << std::setw(6) << (tn ? tpos + tn - 1 : tpos - 1) << "\n\n";
            qpos += qn;
            tpos += tn;
        }
    }

    std::ostream& out_;
    WriterContext ctx_;
};

class JsonWriter : public AlignmentWriter {
public:
    JsonWriter(std::ostream& out, WriterContext context) : out_(out), ctx_(std::move(context)) {}
    void write(const Alignment& a, const Sequence&, const Sequence&, const AlignmentExtras& extras) override {
        // Ids read back from a damaged project may not be UTF-8: U+FFFD, not an exception.
        out_ << detail::alignment_json(a, ctx_.scheme, extras)
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
             << '\n';
    }

private:
    std::ostream& out_;
    WriterContext ctx_;
};

class TsvWriter : public AlignmentWriter {
public:
    TsvWriter(std::ostream& out, WriterContext context) : out_(out), ctx_(std::move(context)) {}
    void begin() override {
        out_ << "query\ttarget\tscore\tmode\tquery_begin\tquery_end\ttarget_begin\ttarget_end\tidentity\t"
                "similarity\tgaps\tlength\tcigar\tdevice\tkernel";
        header_extras_ = true;
    }
    void write(const Alignment& a, const Sequence&, const Sequence&, const AlignmentExtras& extras) override {
        if (header_extras_) {
            if (extras.rank) out_ << "\trank";
            if (extras.bits) out_ << "\tbits";
            if (extras.evalue) out_ << "\tevalue";
            out_ << '\n';
            header_extras_ = false;
        }
        std::string& line = line_;
        line.clear();
        line += a.query_id;
        line += '\t';
        line += a.target_id;
        line += '\t';
        append_score(line, ctx_.scheme.to_user(a.score));
        line += '\t';
        line += to_string(a.mode);
        for (const auto value : {a.query_begin, a.query_end, a.target_begin, a.target_end}) {
            line += '\t';
            append_number(line, value);
        }
        line += '\t';
        append_double(line, fraction(a.stats.identities, a.stats.length));
        line += '\t';
        append_double(line, fraction(a.stats.similarities, a.stats.length));
        line += '\t';
        append_number(line, a.stats.gaps);
        line += '\t';
        append_number(line, a.stats.length);
        line += '\t';
        if (a.cigar.empty()) line += '*';
        else
            append_cigar(line, a.cigar);
        line += '\t';
        line += a.device;
        line += '\t';
        line += a.kernel.empty() ? std::string_view("-") : std::string_view(a.kernel);
        out_.write(line.data(), static_cast<std::streamsize>(line.size()));
        if (extras.rank) out_ << '\t' << *extras.rank;
        if (extras.bits) out_ << '\t' << *extras.bits;
        if (extras.evalue) out_ << '\t' << *extras.evalue;
        out_ << '\n';
    }
    void end() override {
        if (header_extras_) out_ << '\n';
    }

private:
    std::ostream& out_;
    WriterContext ctx_;
    bool header_extras_ = false;
    std::string line_;  // kept from line to line
};

class SamWriter : public AlignmentWriter {
public:
    SamWriter(std::ostream& out, WriterContext context) : out_(out), ctx_(std::move(context)) {}
    void begin() override {
        out_ << "@HD\tVN:1.6\tSO:unsorted\n";
        write_sam_references(out_, ctx_.references);
        out_ << "@PG\tID:alignscope\tPN:" << ctx_.program << "\tVN:" << ALIGNSCOPE_VERSION;
        if (!ctx_.command_line.empty()) out_ << "\tCL:" << ctx_.command_line;
        out_ << '\n';
    }
    void write(const Alignment& a, const Sequence& query, const Sequence& target, const AlignmentExtras&) override {
        const bool mapped = a.has_traceback() && a.query_end > 0;
        std::string& line = line_;
        line.clear();
        line += query.id;
        line += mapped ? "\t0\t" : "\t4\t";
        line += mapped ? std::string_view(target.id) : std::string_view("*");
        line += '\t';
        append_number(line, mapped ? a.target_begin : decltype(a.target_begin){0});
        line += mapped ? "\t255\t" : "\t0\t";
        if (mapped) {
            if (a.query_begin > 1) {
                append_number(line, a.query_begin - 1);
                line += 'S';
            }
            append_cigar(line, a.cigar);
            if (a.query_end < a.query_length) {
                append_number(line, a.query_length - a.query_end);
                line += 'S';
            }
        } else {
            line += '*';
        }
        line += "\t*\t0\t0\t";
        line += query.residues;
        line += '\t';
        line += query.quality.empty() ? std::string_view("*") : std::string_view(query.quality);
        const double user = ctx_.scheme.to_user(a.score);
        if (user == std::floor(user)) {
            line += "\tAS:i:";
            append_number(line, static_cast<long long>(user));
        } else {
            line += "\tZS:f:";
            append_double(line, user);
        }
        line += '\n';
        out_.write(line.data(), static_cast<std::streamsize>(line.size()));
    }

private:
    std::ostream& out_;
    WriterContext ctx_;
    std::string line_;  // kept from line to line
};

}  // namespace

std::unique_ptr<AlignmentWriter> AlignmentWriter::create(OutputFormat format, std::ostream& out,
                                                         WriterContext context) {
    switch (format) {
        case OutputFormat::Pair: return std::make_unique<PairWriter>(out, std::move(context));
        case OutputFormat::Json: return std::make_unique<JsonWriter>(out, std::move(context));
        case OutputFormat::Tsv: return std::make_unique<TsvWriter>(out, std::move(context));
        case OutputFormat::Sam: return std::make_unique<SamWriter>(out, std::move(context));
    }
    throw Error("unknown output format");
}

}  // namespace alignscope
