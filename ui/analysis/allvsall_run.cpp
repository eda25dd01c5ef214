// All against all for the workbench: the engine's tiles over one set, the
// scores gathered into a square matrix, clusters, the matrix files and JSON.
#include "analysis/allvsall_run.hpp"

#include "analysis/analysis_job.hpp"

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/clustering.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <numeric>

namespace alignscope::ui {

double AllVsAllResults::normalised(std::size_t i, std::size_t j) const {
    const double low = std::min(score(i, i), score(j, j));
    return low > 0 ? score(i, j) / low : 0.0;
}

double AllVsAllResults::distance(std::size_t i, std::size_t j) const {
    if (i == j) return 0.0;
    return std::max(0.0, 1.0 - normalised(i, j));
}

std::vector<std::size_t> AllVsAllResults::boundaries() const {
    std::vector<std::size_t> out;
    for (std::size_t k = 1; k < order.size(); ++k)
        if (cluster[order[k]] != cluster[order[k - 1]]) out.push_back(k);
    return out;
}

ScoringScheme allvsall_scheme(const AllVsAllRequest& request) {
    if (!(request.gap_open >= 0) || !(request.gap_extend >= 0))
        throw Error("gap open and gap extend must be 0 or more (penalties are positive)");
    return ScoringScheme::create(SubstitutionMatrix::resolve(request.matrix), request.gap_open, request.gap_extend);
}

namespace {

AlignOptions options_of(const AllVsAllRequest& request) {
    AlignOptions options;
    options.mode = request.mode;
    options.free_ends = request.mode == AlignmentMode::SemiGlobal ? FreeEndGaps::all() : FreeEndGaps::none();
    return options;
}

class EveryTile : public allvsall::TileSource {
public:
    explicit EveryTile(std::uint64_t count) : count_(count) {}
    std::optional<std::uint64_t> next() override {
        if (next_ >= count_) return std::nullopt;
        return next_++;
    }
    std::optional<std::uint64_t> next_ready(bool& none_left) override {
        auto tile = next();
        none_left = !tile;
        return tile;
    }

private:
    std::uint64_t next_ = 0, count_;
};

class MatrixSink : public allvsall::TileSink {
public:
    MatrixSink(const allvsall::Problem& problem, AllVsAllResults& out, JobContext& context)
        : problem_(problem), out_(out), context_(context) {}
    void put(allvsall::TileResult&& r) override {
        std::lock_guard lock(mutex_);
        const std::size_t n = out_.size();
        for (const auto& p : r.scores) {
            const double s = problem_.scheme.to_user(p.score);
            out_.scores[p.i * n + p.j] = out_.scores[p.j * n + p.i] = s;
        }
        for (const auto& t : r.traced) {
            const auto& p = r.scores.at(t.index);
            TracedSummary summary{t.query_begin, t.query_end, t.target_begin, t.target_end, t.stats, t.cigar};
            out_.traced[{std::min(p.i, p.j), std::max(p.i, p.j)}] = std::move(summary);
        }
        done_pairs_ += r.scores.size();
        done_cells_ += problem_.tiling.cell_count(r.tile);
        if (context_.progress) {
            Progress progress;
            progress.items_done = done_pairs_;
            progress.items_total = problem_.tiling.pair_count();
            progress.cells_done = done_cells_;
            progress.cells_total = problem_.tiling.cell_count();
            context_.progress(progress);
        }
    }

private:
    const allvsall::Problem& problem_;
    AllVsAllResults& out_;
    JobContext& context_;
    std::mutex mutex_;
    std::uint64_t done_pairs_ = 0, done_cells_ = 0;
};

}  // namespace

AllVsAllResults run_allvsall(const AllVsAllRequest& request, JobContext& context) {
    if (!request.records || request.records->size() < 2)
        throw Error("all against all needs a set of at least two sequences");
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Sequence>& records = *request.records;
    const ScoringScheme scheme = allvsall_scheme(request);
    allvsall::TraceCriteria trace;
    trace.min_normalised = request.threshold;
    Backend& backend = analysis_devices().select(request.device, "device");
    allvsall::Problem problem = allvsall::make_problem(records, nullptr, scheme, options_of(request), trace,
                                                       backend.info().kind == "gpu" ? 512 : 128);
    problem.threads = request.threads;
    // Engine progress inside a tile is per pair batch; the job's bar counts whole tiles.
    JobContext quiet = context;
    quiet.progress = nullptr;
    allvsall::compute_self_scores(problem, backend, quiet);

    AllVsAllResults out;
    out.label = request.label;
    out.device = backend.info().id;
    out.matrix = request.matrix;
    out.mode = std::string(to_string(request.mode));
    out.gap_open = request.gap_open;
    out.gap_extend = request.gap_extend;
    out.threshold = request.threshold;
    const std::size_t n = records.size();
    for (const Sequence& s : records) {
        out.ids.push_back(s.id);
        out.lengths.push_back(s.residues.size());
    }
    out.scores.assign(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i) out.scores[i * n + i] = scheme.to_user(problem.row_self[i]);

    EveryTile tiles(problem.tiling.tile_count());
    MatrixSink sink(problem, out, context);
    allvsall::run_tiles(problem, backend, tiles, sink, quiet);

    std::vector<allvsall::SimilarityEdge> edges;
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t j = i + 1; j < n; ++j)
            if (out.normalised(i, j) >= request.threshold) edges.push_back({i, j, out.normalised(i, j)});
    out.cluster = allvsall::single_linkage(n, edges, request.threshold);
    out.order.resize(n);
    std::iota(out.order.begin(), out.order.end(), 0u);
    std::stable_sort(out.order.begin(), out.order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return out.cluster[a] < out.cluster[b]; });
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

Alignment align_pair(const AllVsAllRequest& request, std::uint32_t i, std::uint32_t j, JobContext& context) {
    if (!request.records || i >= request.records->size() || j >= request.records->size())
        throw Error("no such pair of records");
    PairJob job;
    job.queries = request.records.get();
    job.targets = request.records.get();
    job.pairs = {{std::min(i, j), std::max(i, j)}};
    job.scheme = allvsall_scheme(request);
    job.options = options_of(request);
    job.options.traceback = true;
    job.threads = request.threads;
    Backend& backend = analysis_devices().select(request.device, "device");
    std::vector<Alignment> result = backend.align_pairs(job, context);
    if (result.size() != 1) throw Error(request.device + " returned no alignment");
    Alignment a = std::move(result.front());
    a.query_id = (*request.records)[job.pairs[0].first].id;
    a.target_id = (*request.records)[job.pairs[0].second].id;
    return a;
}

void write_distance_matrix(const AllVsAllResults& r, const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool phylip = suffix == "phy" || suffix == "phylip";
    if (!phylip && suffix != "csv")
        throw Error(path.toStdString() + ": name a .phy (PHYLIP square matrix) or .csv file");
    auto csv_field = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    std::string text;
    char number[32];
    const std::size_t n = r.size();
    if (phylip) {
        text += std::to_string(n) + "\n";
    } else {
        text += "id";
        for (const auto& id : r.ids) text += "," + csv_field(id);
        text += "\n";
    }
    for (std::size_t i = 0; i < n; ++i) {
        text += phylip ? r.ids[i] : csv_field(r.ids[i]);
        for (std::size_t j = 0; j < n; ++j) {
            // Held as float, as the command line's matrix is, so both write the same digits.
            std::snprintf(number, sizeof number, phylip ? " %.6f" : ",%.6f",
                          double(static_cast<float>(r.distance(i, j))));
            text += number;
        }
        text += "\n";
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !file.commit())
        throw Error(path.toStdString() + ": cannot write: " + file.errorString().toStdString());
}

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

QByteArray parameters_json(const AllVsAllResults& r) {
    return QJsonDocument(QJsonObject{{"set", q(r.label)},
                                     {"matrix", q(r.matrix)},
                                     {"mode", q(r.mode)},
                                     {"gap_open", r.gap_open},
                                     {"gap_extend", r.gap_extend},
                                     {"threshold", r.threshold},
                                     {"device", q(r.device)}})
        .toJson(QJsonDocument::Compact);
}

QByteArray to_json(const AllVsAllResults& r) {
    QJsonArray ids, lengths, scores, clusters, traced;
    for (const auto& id : r.ids) ids.append(q(id));
    for (auto l : r.lengths) lengths.append(double(l));
    for (double s : r.scores) scores.append(s);
    for (auto c : r.cluster) clusters.append(double(c));
    for (const auto& [pair, t] : r.traced)
        traced.append(QJsonArray{double(pair.first), double(pair.second), double(t.query_begin), double(t.query_end),
                                 double(t.target_begin), double(t.target_end), double(t.stats.length),
                                 double(t.stats.identities), double(t.stats.similarities), double(t.stats.gaps),
                                 double(t.stats.gap_opens), q(t.cigar)});
    QJsonObject o = QJsonDocument::fromJson(parameters_json(r)).object();
    o["format"] = "alignscope allvsall 1";
    o["seconds"] = r.seconds;
    o["ids"] = ids;
    o["lengths"] = lengths;
    o["scores"] = scores;
    o["clusters"] = clusters;
    o["traced"] = traced;
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

AllVsAllResults allvsall_results_from_json(const QByteArray& json) {
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    const QJsonObject o = doc.object();
    if (o["format"].toString() != QLatin1String("alignscope allvsall 1"))
        throw Error("the stored all-against-all matrix cannot be read");
    AllVsAllResults r;
    r.label = o["set"].toString().toStdString();
    r.matrix = o["matrix"].toString().toStdString();
    r.mode = o["mode"].toString().toStdString();
    r.device = o["device"].toString().toStdString();
    r.gap_open = o["gap_open"].toDouble();
    r.gap_extend = o["gap_extend"].toDouble();
    r.threshold = o["threshold"].toDouble();
    r.seconds = o["seconds"].toDouble();
    for (const auto& v : o["ids"].toArray()) r.ids.push_back(v.toString().toStdString());
    for (const auto& v : o["lengths"].toArray()) r.lengths.push_back(std::size_t(v.toDouble()));
    for (const auto& v : o["scores"].toArray()) r.scores.push_back(v.toDouble());
    for (const auto& v : o["clusters"].toArray()) r.cluster.push_back(std::uint32_t(v.toDouble()));
    const std::size_t n = r.ids.size();
    if (r.lengths.size() != n || r.scores.size() != n * n || r.cluster.size() != n)
        throw Error("the stored all-against-all matrix is damaged (sizes disagree)");
    for (const auto& v : o["traced"].toArray()) {
        const QJsonArray a = v.toArray();
        TracedSummary t;
        t.query_begin = std::int64_t(a[2].toDouble());
        t.query_end = std::int64_t(a[3].toDouble());
        t.target_begin = std::int64_t(a[4].toDouble());
        t.target_end = std::int64_t(a[5].toDouble());
        t.stats.length = std::int64_t(a[6].toDouble());
        t.stats.identities = std::int64_t(a[7].toDouble());
        t.stats.similarities = std::int64_t(a[8].toDouble());
        t.stats.gaps = std::int64_t(a[9].toDouble());
        t.stats.gap_opens = std::int64_t(a[10].toDouble());
        t.cigar = a[11].toString().toStdString();
        r.traced[{std::uint32_t(a[0].toDouble()), std::uint32_t(a[1].toDouble())}] = std::move(t);
    }
    r.order.resize(n);
    std::iota(r.order.begin(), r.order.end(), 0u);
    std::stable_sort(r.order.begin(), r.order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return r.cluster[a] < r.cluster[b]; });
    return r;
}

}  // namespace alignscope::ui
