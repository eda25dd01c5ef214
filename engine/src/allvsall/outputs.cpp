// The all-against-all output files (see outputs.hpp).
#include <alignscope/allvsall/clustering.hpp>
#include <alignscope/allvsall/outputs.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>

namespace alignscope::allvsall {
namespace {

enum class MatrixFormat { Phylip, Csv };

MatrixFormat matrix_format(const std::string& path) {
    auto ends = [&](const std::string& s) {
        return path.size() >= s.size() && std::equal(s.rbegin(), s.rend(), path.rbegin(), [](char a, char b) {
                   return a == std::tolower(static_cast<unsigned char>(b));
               });
    };
    if (ends(".phy") || ends(".phylip")) return MatrixFormat::Phylip;
    if (ends(".csv")) return MatrixFormat::Csv;
    throw Error("--matrix-out: " + path + ": name a .phy (PHYLIP square matrix) or .csv file");
}

std::string score_text(double user) {
    char buffer[64];
    if (user == std::floor(user)) std::snprintf(buffer, sizeof buffer, "%.0f", user);
    else
        std::snprintf(buffer, sizeof buffer, "%.1f", user);
    return buffer;
}

double fraction(std::int64_t part, std::int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

template <typename Integer>
void append_number(std::string& out, Integer v) {
    char buffer[24];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    out.append(buffer, r.ptr);
}

// As printf's "%.4f".
void append_fixed4(std::string& out, double v) {
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, 4);
    if (r.ec == std::errc()) {
        out.append(buffer, r.ptr);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.4f", v);
        out += buffer;
    }
}

// score_text's text, integers without printf.
void append_score(std::string& out, double user) {
    if (user == std::floor(user) && std::fabs(user) < 1e15) append_number(out, static_cast<long long>(user));
    else
        out += score_text(user);
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

}  // namespace

Distance parse_distance(const std::string& name) {
    if (name == "score") return Distance::Score;
    if (name == "identity") return Distance::Identity;
    throw Error("--distance: unknown distance '" + name + "' (expected score or identity)");
}

void check_outputs(const Problem& problem, const OutputFiles& files) {
    if (!files.matrix.empty() && matrix_format(files.matrix) == MatrixFormat::Phylip && !problem.triangle())
        throw Error("--matrix-out: a PHYLIP matrix is square: with --against write a .csv file");
    if (!files.clusters.empty() && !problem.triangle())
        throw Error("--clusters: clusters are of one set; they do not apply with --against");
    if (!(files.cluster_threshold >= -1e9 && files.cluster_threshold <= 1e9))
        throw Error("--cluster-threshold must be a number");
    if (files.distance == Distance::Identity && !problem.trace.all)
        throw Error("--distance identity needs every pair traced back");
}

namespace {

// One line of the pair table for pair p (to_chars: the text printf's %.4f
// gives, without its locale and stream overhead; 10^8 lines are written).
void append_table_line(std::string& line, const Problem& problem, const PairScore& p, double normalised,
                       const TracedPair* traced) {
    line.clear();
    append_number(line, p.i + 1);
    line += '\t';
    append_number(line, p.j + 1);
    line += '\t';
    line += (*problem.rows)[p.i].id;
    line += '\t';
    line += (*problem.columns)[p.j].id;
    line += '\t';
    append_score(line, problem.scheme.to_user(p.score));
    line += '\t';
    append_fixed4(line, normalised);
    line += '\t';
    if (!traced) {
        line += "-\t-\t-\t-\t-\t-\t-\t*\n";
        return;
    }
    append_fixed4(line, fraction(traced->stats.identities, traced->stats.length));
    line += '\t';
    append_fixed4(line, fraction(traced->stats.similarities, traced->stats.length));
    line += '\t';
    append_number(line, traced->stats.gaps);
    line += '\t';
    append_number(line, traced->query_begin);
    line += '\t';
    append_number(line, traced->query_end);
    line += '\t';
    append_number(line, traced->target_begin);
    line += '\t';
    append_number(line, traced->target_end);
    line += '\t';
    line += traced->cigar.empty() ? std::string_view("*") : std::string_view(traced->cigar);
    line += '\n';
}

// The pair's similarity for the matrix and the clusters: its normalised score,
// or with --distance identity the identity of its traceback.
double similarity_of(const PairScore& p, double normalised, const TracedPair* traced, bool identity) {
    if (!identity) return normalised;
    if (!traced)
        throw Error("allvsall: internal: pair " + std::to_string(p.i + 1) + "," + std::to_string(p.j + 1) +
                    " has no traceback for its identity");
    return traced->stats.length > 0 ? double(traced->stats.identities) / double(traced->stats.length) : 0.0;
}

// The distance matrix (1 - similarity), as PHYLIP or as CSV.
void write_distance_matrix(std::ostream& out, MatrixFormat format, const std::vector<Sequence>& rows,
                           const std::vector<Sequence>& columns, const std::vector<float>& matrix) {
    char text[32];
    if (format == MatrixFormat::Phylip) {
        out << rows.size() << '\n';
        for (std::size_t i = 0; i < rows.size(); ++i) {
            out << rows[i].id;
            for (std::size_t j = 0; j < columns.size(); ++j) {
                std::snprintf(text, sizeof text, " %.6f", double(matrix[i * columns.size() + j]));
                out << text;
            }
            out << '\n';
        }
        return;
    }
    out << "id";
    for (const Sequence& c : columns) out << ',' << csv_field(c.id);
    out << '\n';
    for (std::size_t i = 0; i < rows.size(); ++i) {
        out << csv_field(rows[i].id);
        for (std::size_t j = 0; j < columns.size(); ++j) {
            std::snprintf(text, sizeof text, ",%.6f", double(matrix[i * columns.size() + j]));
            out << text;
        }
        out << '\n';
    }
}

// Each record's single-linkage cluster and greedy centroid cluster.
void write_clusters(std::ostream& out, const std::vector<Sequence>& rows, const std::vector<SimilarityEdge>& edges,
                    double threshold) {
    std::vector<std::size_t> lengths;
    for (const Sequence& s : rows) lengths.push_back(s.residues.size());
    const std::vector<std::uint32_t> single = single_linkage(rows.size(), edges, threshold);
    const CentroidClusters greedy = greedy_centroid(lengths, edges, threshold);
    out << "record\tid\tlength\tsingle_linkage\tcentroid_cluster\tcentroid\n";
    for (std::size_t r = 0; r < rows.size(); ++r)
        out << r + 1 << '\t' << rows[r].id << '\t' << rows[r].residues.size() << '\t' << single[r] << '\t'
            << greedy.cluster[r] << '\t' << rows[greedy.centroids[greedy.cluster[r] - 1]].id << '\n';
}

}  // namespace

void write_outputs(const Problem& problem, const ResultSpool& spool, const std::map<PairIndex, TracedPair>& late,
                   const OutputFiles& files) {
    const std::vector<Sequence>& rows = *problem.rows;
    const std::vector<Sequence>& columns = *problem.columns;
    const bool identity = files.distance == Distance::Identity;

    // Open every output first so a bad path fails before the pass.
    std::unique_ptr<AtomicOutput> table, matrix_out, clusters_out;
    if (!files.table.empty()) table = std::make_unique<AtomicOutput>(files.table);
    if (!files.matrix.empty()) matrix_out = std::make_unique<AtomicOutput>(files.matrix);
    if (!files.clusters.empty()) clusters_out = std::make_unique<AtomicOutput>(files.clusters);

    std::vector<float> matrix;
    if (matrix_out) {
        const double cells = double(rows.size()) * double(columns.size());
        if (cells * sizeof(float) > 64.0 * (1ull << 30))
            throw Error("--matrix-out: a " + std::to_string(rows.size()) + " x " + std::to_string(columns.size()) +
                        " matrix does not fit in memory");
        matrix.assign(rows.size() * columns.size(), 0.0f);
    }
    std::vector<SimilarityEdge> edges;

    std::string line, chunk;
    if (table)
        table->stream() << "i\tj\tquery\ttarget\tscore\tnormalised\tidentity\tsimilarity\tgaps\tquery_begin\t"
                           "query_end\ttarget_begin\ttarget_end\tcigar\n";
    spool.for_each([&](const TileResult& r) {
        std::size_t t = 0;
        for (std::size_t k = 0; k < r.scores.size(); ++k) {
            const PairScore& p = r.scores[k];
            while (t < r.traced.size() && r.traced[t].index < k) ++t;
            const TracedPair* traced = t < r.traced.size() && r.traced[t].index == k ? &r.traced[t] : nullptr;
            if (!traced) {
                const auto it = late.find({p.i, p.j});
                if (it != late.end()) traced = &it->second;
            }
            const double normalised = problem.normalised(p.i, p.j, p.score);
            if (table) {
                append_table_line(line, problem, p, normalised, traced);
                chunk += line;
                if (chunk.size() >= (1u << 20)) {
                    table->stream().write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
                    chunk.clear();
                }
            }
            if (!matrix_out && !clusters_out) continue;
            const double similarity = similarity_of(p, normalised, traced, identity);
            if (matrix_out) {
                const float d = static_cast<float>(std::max(0.0, 1.0 - similarity));
                matrix[std::size_t{p.i} * columns.size() + p.j] = d;
                if (problem.triangle()) matrix[std::size_t{p.j} * columns.size() + p.i] = d;
            }
            if (clusters_out && similarity >= files.cluster_threshold) edges.push_back({p.i, p.j, similarity});
        }
    });

    if (table && !chunk.empty()) table->stream().write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (matrix_out) write_distance_matrix(matrix_out->stream(), matrix_format(files.matrix), rows, columns, matrix);
    if (clusters_out) write_clusters(clusters_out->stream(), rows, edges, files.cluster_threshold);
    commit_together({table.get(), matrix_out.get(), clusters_out.get(), files.with});
}

}  // namespace alignscope::allvsall
