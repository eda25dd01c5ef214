// The streamed alignment writer (see alignment_stream.hpp).
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_stream.hpp>
#include <alignscope/io/atomic_file.hpp>

#include "alignment_format_detail.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <random>
#include <vector>

#include <unistd.h>

namespace alignscope {

namespace {

constexpr std::size_t kBlockWidth = 50;  // columns per block of the pair format (PairWriter's)
constexpr std::string_view kJsonOpening = "{\"cigar\":\"";

// The pair format's 13-character name field.
std::string name_field(const std::string& id) {
    std::string n = id.substr(0, 13);
    n.resize(13, ' ');
    return n;
}

}  // namespace

struct AlignmentFileStream::State {
    std::string path;
    OutputFormat format;
    WriterContext context;
    const Sequence& query;
    const Sequence& target;
    AtomicOutput out;
    // The pair format's blocks until commit().
    std::string spool_path;
    std::fstream spool;

    bool begun = false, ended = false, committed = false;
    Alignment alignment;     // begin(): the header; end(): with statistics (tsv, sam: and the CIGAR)
    bool traceback = false;  // end(): the alignment has a path
    std::int64_t columns = 0;
    std::int64_t qi = 0, ti = 0;  // next residues (1-based)

    // Pair: the block being filled and where it starts.
    std::string qs, ts, markup;
    std::int64_t block_q = 0, block_t = 0, block_qn = 0, block_tn = 0;
    std::string query_name, target_name;
    // JSON: the CIGAR run not yet written (the next call may go on with it).
    char run_op = 0;
    std::uint64_t run_length = 0;

    State(const std::string& p, OutputFormat f, WriterContext c, const Sequence& q, const Sequence& t)
        : path(p), format(f), context(std::move(c)), query(q), target(t), out(checked(p)) {
        if (format == OutputFormat::Pair) open_spool();
    }
    ~State() {
        if (spool.is_open()) spool.close();
        if (!spool_path.empty()) std::remove(spool_path.c_str());
    }

    static const std::string& checked(const std::string& p) {
        if (p.empty() || p == "-")
            throw Error("a streamed alignment is written to a file (standard output cannot be replaced atomically)");
        return p;
    }

    [[noreturn]] void write_failed() const {
        throw Error(path + ": write failed (disk full?); the file was not changed");
    }

    void open_spool() {
        namespace fs = std::filesystem;
        const fs::path target_path(path);
        const fs::path dir = target_path.has_parent_path() ? target_path.parent_path() : fs::path(".");
        std::random_device rd;
        spool_path = (dir / ("." + target_path.filename().string() + ".blocks." + std::to_string(::getpid()) + "." +
                             std::to_string(rd() % 1000000)))
                         .string();
        spool.open(spool_path, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc);
        if (!spool.is_open()) {
            const std::string why = std::strerror(errno);
            spool_path.clear();
            throw Error(path + ": cannot write here (" + why + ")");
        }
    }

    void flush_block() {
        if (qs.empty()) return;
        char line[128];
        std::snprintf(line, sizeof line, "%s %6lld ", query_name.c_str(), static_cast<long long>(block_q));
        spool << line << qs << " " << std::setw(6) << (block_qn ? block_q + block_qn - 1 : block_q - 1) << "\n";
        spool << std::string(21, ' ') << markup << "\n";
        std::snprintf(line, sizeof line, "%s %6lld ", target_name.c_str(), static_cast<long long>(block_t));
        spool << line << ts << " " << std::setw(6) << (block_tn ? block_t + block_tn - 1 : block_t - 1) << "\n\n";
        if (!spool) write_failed();
        block_q += block_qn;
        block_t += block_tn;
        block_qn = block_tn = 0;
        qs.clear();
        ts.clear();
        markup.clear();
    }

    void pair_column(char q, char t) {
        qs += q;
        ts += t;
        markup += detail::markup_char(q, t, context.scheme.matrix);
        if (qs.size() == kBlockWidth) flush_block();
    }

    void pair_run(const CigarOp& run) {
        const std::string& qr = query.residues;
        const std::string& tr = target.residues;
        for (std::uint32_t k = 0; k < run.length; ++k) {
            // Count the column's residues before it may close the block.
            const char q = run.op == 'D' ? '-' : qr[static_cast<std::size_t>(qi - 1)];
            const char t = run.op == 'I' ? '-' : tr[static_cast<std::size_t>(ti - 1)];
            if (run.op != 'D') {
                ++qi;
                ++block_qn;
            }
            if (run.op != 'I') {
                ++ti;
                ++block_tn;
            }
            pair_column(q, t);
        }
    }

    void flush_run() {
        if (run_length == 0) return;
        out.stream() << run_length << run_op;
        if (!out.stream()) write_failed();
        run_length = 0;
    }
};

AlignmentFileStream::AlignmentFileStream(const std::string& path, OutputFormat format, WriterContext context,
                                         const Sequence& query, const Sequence& target)
    : state_(std::make_unique<State>(path, format, std::move(context), query, target)) {}

AlignmentFileStream::~AlignmentFileStream() = default;

const std::string& AlignmentFileStream::path() const { return state_->path; }
std::int64_t AlignmentFileStream::columns_written() const { return state_->columns; }

void AlignmentFileStream::begin(const Alignment& header) {
    State& s = *state_;
    if (s.begun) throw Error("internal error: a streamed alignment begun twice (" + s.path + ")");
    s.begun = true;
    s.alignment = header.without_path();
    s.alignment.query_id = s.query.id;
    s.alignment.target_id = s.target.id;
    s.qi = s.block_q = header.query_begin;
    s.ti = s.block_t = header.target_begin;
    s.query_name = name_field(s.query.id);
    s.target_name = name_field(s.target.id);
    if (s.format == OutputFormat::Json) {
        s.out.stream() << kJsonOpening;
        if (!s.out.stream()) s.write_failed();
    }
}

void AlignmentFileStream::columns(std::span<const CigarOp> runs) {
    State& s = *state_;
    if (!s.begun || s.ended)
        throw Error("internal error: columns of a streamed alignment outside begin/end (" + s.path + ")");
    for (const CigarOp& run : runs) {
        if (run.length == 0) continue;
        if (run.op != '=' && run.op != 'X' && run.op != 'I' && run.op != 'D')
            throw Error(std::string("internal error: a streamed alignment column '") + run.op + "' (" + s.path + ")");
        const bool q = run.op != 'D', t = run.op != 'I';
        if ((q && s.qi - 1 + run.length > static_cast<std::int64_t>(s.query.residues.size())) ||
            (t && s.ti - 1 + run.length > static_cast<std::int64_t>(s.target.residues.size())))
            throw Error("internal error: the streamed alignment runs past the end of a sequence (" + s.path + ")");
        s.columns += run.length;
        switch (s.format) {
            case OutputFormat::Pair: s.pair_run(run); break;
            case OutputFormat::Json:
                if (run.op != s.run_op) {
                    s.flush_run();
                    s.run_op = run.op;
                }
                s.run_length += run.length;
                // The positions only keep the bounds check above meaningful.
                if (q) s.qi += run.length;
                if (t) s.ti += run.length;
                break;
            case OutputFormat::Tsv:
            case OutputFormat::Sam:  // written from the CIGAR at commit()
                if (q) s.qi += run.length;
                if (t) s.ti += run.length;
                break;
        }
    }
}

void AlignmentFileStream::end(const Alignment& alignment) {
    State& s = *state_;
    if (!s.begun || s.ended) throw Error("internal error: a streamed alignment ended outside begin (" + s.path + ")");
    if (alignment.cigar.columns() != s.columns)
        throw Error("internal error: the streamed alignment has " + std::to_string(s.columns) + " columns, its CIGAR " +
                    std::to_string(alignment.cigar.columns()) + " (" + s.path + ")");
    s.ended = true;
    s.traceback = alignment.has_traceback();
    if (s.format == OutputFormat::Tsv || s.format == OutputFormat::Sam) s.alignment = alignment;
    else
        s.alignment = alignment.without_path();
    s.alignment.query_id = s.query.id;
    s.alignment.target_id = s.target.id;
    if (s.format == OutputFormat::Pair) s.flush_block();
    if (s.format == OutputFormat::Json) s.flush_run();
}

void AlignmentFileStream::commit(std::string_view extra_json) {
    State& s = *state_;
    if (s.committed) return;
    if (!s.ended) throw Error("internal error: a streamed alignment committed before its end (" + s.path + ")");
    std::ostream& out = s.out.stream();
    switch (s.format) {
        case OutputFormat::Pair: {
            detail::write_pair_preamble(out, s.context);
            detail::write_pair_header(out, s.alignment, s.context.scheme, {}, s.traceback);
            s.spool.flush();
            if (!s.spool) s.write_failed();
            s.spool.seekg(0);
            std::vector<char> buffer(1 << 20);
            while (s.spool) {
                s.spool.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
                const std::streamsize got = s.spool.gcount();
                if (got > 0) out.write(buffer.data(), got);
                if (!out) s.write_failed();
            }
            if (!s.spool.eof()) s.write_failed();  // a read error, not the end
            break;
        }
        case OutputFormat::Json: {
            nlohmann::json j = detail::alignment_json(s.alignment, s.context.scheme, {});
            if (!extra_json.empty()) {
                const nlohmann::json extra = nlohmann::json::parse(extra_json, nullptr, false);
                if (!extra.is_object()) throw Error("internal error: extra JSON fields that are not an object");
                for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
            }
            const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            // The record with an empty CIGAR starts {"cigar":"" ; the file holds
            // {"cigar":" and the CIGAR: the rest follows from the closing quote.
            if (text.compare(0, kJsonOpening.size() + 1, std::string(kJsonOpening) + "\"") != 0)
                throw Error("internal error: this JSON record does not start with its CIGAR (" + s.path + ")");
            out << std::string_view(text).substr(kJsonOpening.size()) << '\n';
            break;
        }
        case OutputFormat::Tsv:
        case OutputFormat::Sam: {
            auto writer = AlignmentWriter::create(s.format, out, s.context);
            writer->begin();
            writer->write(s.alignment, s.query, s.target);
            writer->end();
            break;
        }
    }
    if (!out) s.write_failed();
    s.out.commit();
    s.committed = true;
    if (s.spool.is_open()) s.spool.close();
    if (!s.spool_path.empty()) {
        std::remove(s.spool_path.c_str());
        s.spool_path.clear();
    }
}

}  // namespace alignscope
