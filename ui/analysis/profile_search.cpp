// Profile search for the workbench: the engine's pipeline over one model file,
// its results to and from the project's JSON, and the HMMER-style alignment text.
#include "analysis/profile_search.hpp"
#include "analysis/analysis_job.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/hmmsearch_output.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace alignscope::ui {

profile::ProfileTargets profile_targets_of(const std::vector<Sequence>& records, profile::ResidueAlphabet alphabet,
                                           const std::string& label) {
    const profile::ResidueCode& code = profile::ResidueCode::of(alphabet);
    profile::ProfileTargets t;
    t.alphabet = alphabet;
    t.path = label;
    t.offsets.push_back(0);
    std::vector<std::uint8_t> codes;
    for (std::size_t r = 0; r < records.size(); ++r) {
        const Sequence& s = records[r];
        if (s.residues.size() > 100'000)
            throw Error(label + ": record " + std::to_string(r + 1) + " (" + s.id + ") has " +
                        std::to_string(s.residues.size()) +
                        " residues; a profile search target may have at most 100000");
        codes.clear();
        if (const std::size_t bad = code.digitise(s.residues, codes); bad != std::string::npos)
            throw Error(label + ": record " + std::to_string(r + 1) + " (" + s.id + "): letter '" +
                        std::string(1, s.residues[bad]) + "' at position " + std::to_string(bad + 1) +
                        " is not in the profile's " + std::string(code.name()) + " alphabet");
        t.names.push_back(s.id);
        t.descriptions.push_back(s.description);
        t.residues.insert(t.residues.end(), codes.begin(), codes.end());
        t.offsets.push_back(t.residues.size());
    }
    if (t.names.empty()) throw Error(label + ": no sequences to search");
    return t;
}

namespace {

// Only what the workbench shows and exports is kept: the reported targets,
// with all their domains (the tables count them; the view shows the reported ones).
profile::ModelSearch reported_only(profile::ModelSearch search) {
    std::vector<profile::TargetHit> kept;
    for (auto& hit : search.hits)
        if (hit.reported) kept.push_back(std::move(hit));
    search.hits = std::move(kept);
    return search;
}

}  // namespace

ProfileSearchResults run_profile_search(const ProfileSearchRequest& request, JobContext& context) {
    if (request.models.empty()) throw Error("profile search: the profile file holds no model");
    const auto alphabet = request.models.front().alphabet;
    for (const auto& m : request.models)
        if (m.alphabet != alphabet)
            throw Error(request.profile_label + ": model '" + m.name +
                        "' has another alphabet than the first model; one search takes one alphabet");
    const auto start = std::chrono::steady_clock::now();
    const profile::ProfileTargets targets = request.records
                                                ? profile_targets_of(*request.records, alphabet, request.targets_label)
                                                : profile::read_profile_targets(request.database_path, alphabet);
    context.throw_if_cancelled();
    auto scanner = profile_scanners().create(request.device, request.settings.threads);
    scanner->load(targets, context);

    ProfileSearchResults results;
    results.profile_label = request.profile_label;
    results.targets_label = request.targets_label;
    results.device = scanner->info().id;
    results.settings = request.settings;
    const std::uint64_t per_model = targets.size();
    const std::uint64_t all = per_model * request.models.size();
    for (std::size_t m = 0; m < request.models.size(); ++m) {
        const auto& hmm = request.models[m];
        // Each model's search counts its own targets; the bar covers all models.
        JobContext model_context = context;
        model_context.progress = [&, m](const Progress& p) {
            if (!context.progress) return;
            Progress whole;
            whole.items_total = all;
            whole.items_done = m * per_model + std::min<std::uint64_t>(p.items_done, per_model);
            whole.cells_total = all;
            whole.cells_done = whole.items_done;
            context.progress(whole);
        };
        ProfileModelResult r;
        r.name = hmm.name;
        r.accession = hmm.accession;
        r.description = hmm.description;
        r.length = hmm.length;
        r.search = reported_only(profile::search_profile(hmm, targets, *scanner, request.settings, model_context));
        results.models.push_back(std::move(r));
    }
    if (context.progress) {
        Progress done;
        done.items_done = done.items_total = done.cells_done = done.cells_total = all;
        context.progress(done);
    }
    results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return results;
}

double sequence_evalue(const profile::ModelSearch& search, const profile::TargetHit& hit) {
    return std::exp(hit.lnP) * search.Z;
}
double domain_c_evalue(const profile::ModelSearch& search, const profile::DomainHit& domain) {
    return std::exp(domain.lnP) * search.domZ;
}
double domain_i_evalue(const profile::ModelSearch& search, const profile::DomainHit& domain) {
    return std::exp(domain.lnP) * search.Z;
}
double domain_accuracy(const profile::DomainHit& d) {
    return d.expected_accuracy / (1.0 + std::fabs(static_cast<float>(d.env_to - d.env_from)));
}

// ---- JSON ----------------------------------------------------------------

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
std::string s(const QJsonValue& v) { return v.toString().toStdString(); }

QJsonObject settings_json(const profile::PipelineSettings& p) {
    QJsonObject o{{"F1", p.F1},
                  {"F2", p.F2},
                  {"F3", p.F3},
                  {"bias_filter", p.bias_filter},
                  {"null2", p.null2},
                  {"E", p.report_E},
                  {"domE", p.domain_E},
                  {"incE", p.include_E},
                  {"incdomE", p.include_domain_E},
                  {"seed", double(p.seed)}};
    if (p.report_T) o["T"] = *p.report_T;
    if (p.domain_T) o["domT"] = *p.domain_T;
    if (p.Z) o["Z"] = *p.Z;
    if (p.domZ) o["domZ"] = *p.domZ;
    return o;
}

profile::PipelineSettings settings_from(const QJsonObject& o) {
    profile::PipelineSettings p;
    p.F1 = o["F1"].toDouble(p.F1);
    p.F2 = o["F2"].toDouble(p.F2);
    p.F3 = o["F3"].toDouble(p.F3);
    p.bias_filter = o["bias_filter"].toBool(true);
    p.null2 = o["null2"].toBool(true);
    p.report_E = o["E"].toDouble(p.report_E);
    p.domain_E = o["domE"].toDouble(p.domain_E);
    p.include_E = o["incE"].toDouble(p.include_E);
    p.include_domain_E = o["incdomE"].toDouble(p.include_domain_E);
    p.seed = static_cast<std::uint32_t>(o["seed"].toDouble(42));
    if (o.contains("T")) p.report_T = o["T"].toDouble();
    if (o.contains("domT")) p.domain_T = o["domT"].toDouble();
    if (o.contains("Z")) p.Z = o["Z"].toDouble();
    if (o.contains("domZ")) p.domZ = o["domZ"].toDouble();
    return p;
}

QJsonObject domain_json(const profile::DomainHit& d) {
    const auto& a = d.alignment;
    return {{"env_from", d.env_from},
            {"env_to", d.env_to},
            {"score", d.score},
            {"bias", d.bias},
            {"lnP", d.lnP},
            {"expected_accuracy", d.expected_accuracy},
            {"included", d.included},
            {"reported", d.reported},
            {"model_line", q(a.model)},
            {"match_line", q(a.match)},
            {"target_line", q(a.target)},
            {"pp_line", q(a.posterior)},
            {"rf_line", q(a.reference)},
            {"cs_line", q(a.structure)},
            {"hmm_from", a.hmm_from},
            {"hmm_to", a.hmm_to},
            {"ali_from", a.target_from},
            {"ali_to", a.target_to}};
}

profile::DomainHit domain_from(const QJsonObject& o) {
    profile::DomainHit d;
    d.env_from = o["env_from"].toInt();
    d.env_to = o["env_to"].toInt();
    d.score = float(o["score"].toDouble());
    d.bias = float(o["bias"].toDouble());
    d.lnP = o["lnP"].toDouble();
    d.expected_accuracy = float(o["expected_accuracy"].toDouble());
    d.reported = o["reported"].toBool(true);
    d.included = o["included"].toBool();
    auto& a = d.alignment;
    a.model = s(o["model_line"]);
    a.match = s(o["match_line"]);
    a.target = s(o["target_line"]);
    a.posterior = s(o["pp_line"]);
    a.reference = s(o["rf_line"]);
    a.structure = s(o["cs_line"]);
    a.hmm_from = o["hmm_from"].toInt();
    a.hmm_to = o["hmm_to"].toInt();
    a.target_from = o["ali_from"].toInt();
    a.target_to = o["ali_to"].toInt();
    return d;
}

}  // namespace

QByteArray parameters_json(const ProfileSearchResults& r) {
    QJsonObject o = settings_json(r.settings);
    o["profile"] = q(r.profile_label);
    o["targets"] = q(r.targets_label);
    o["device"] = q(r.device);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QByteArray to_json(const ProfileSearchResults& r) {
    QJsonArray models;
    for (const auto& m : r.models) {
        QJsonArray hits;
        for (const auto& h : m.search.hits) {
            QJsonArray domains;
            for (const auto& d : h.domains) domains.append(domain_json(d));
            hits.append(QJsonObject{{"target", double(h.target)},
                                    {"name", q(h.name)},
                                    {"description", q(h.description)},
                                    {"length", h.length},
                                    {"score", h.score},
                                    {"pre_score", h.pre_score},
                                    {"lnP", h.lnP},
                                    {"expected_domains", h.expected_domains},
                                    {"included", h.included},
                                    {"regions", h.regions},
                                    {"clustered", h.clustered},
                                    {"overlaps", h.overlaps},
                                    {"envelopes", h.envelopes},
                                    {"best_domain", h.best_domain},
                                    {"reported_domains", h.reported_domains},
                                    {"domains", domains}});
        }
        const auto& c = m.search.counts;
        models.append(QJsonObject{{"name", q(m.name)},
                                  {"accession", q(m.accession)},
                                  {"description", q(m.description)},
                                  {"length", m.length},
                                  {"Z", m.search.Z},
                                  {"domZ", m.search.domZ},
                                  {"reported", m.search.reported},
                                  {"included", m.search.included},
                                  {"seconds", m.search.seconds},
                                  {"pipeline", QJsonObject{{"targets", double(c.targets)},
                                                           {"residues", double(c.residues)},
                                                           {"passed_msv", double(c.past_msv)},
                                                           {"passed_bias", double(c.past_bias)},
                                                           {"passed_viterbi", double(c.past_viterbi)},
                                                           {"passed_forward", double(c.past_forward)}}},
                                  {"hits", hits}});
    }
    QJsonObject o{{"format", "alignscope profile search 1"},
                  {"profile", q(r.profile_label)},
                  {"targets", q(r.targets_label)},
                  {"device", q(r.device)},
                  {"seconds", r.seconds},
                  {"settings", settings_json(r.settings)},
                  {"models", models}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

ProfileSearchResults profile_results_from_json(const QByteArray& json) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (!doc.isObject() || doc.object()["format"].toString() != QLatin1String("alignscope profile search 1"))
        throw Error("the stored profile search cannot be read" +
                    (error.error ? ": " + error.errorString().toStdString() : std::string()));
    const QJsonObject o = doc.object();
    ProfileSearchResults r;
    r.profile_label = s(o["profile"]);
    r.targets_label = s(o["targets"]);
    r.device = s(o["device"]);
    r.seconds = o["seconds"].toDouble();
    r.settings = settings_from(o["settings"].toObject());
    for (const auto& mv : o["models"].toArray()) {
        const QJsonObject m = mv.toObject();
        ProfileModelResult mr;
        mr.name = s(m["name"]);
        mr.accession = s(m["accession"]);
        mr.description = s(m["description"]);
        mr.length = m["length"].toInt();
        auto& search = mr.search;
        search.name = mr.name;
        search.accession = mr.accession;
        search.model_length = mr.length;
        search.Z = m["Z"].toDouble();
        search.domZ = m["domZ"].toDouble();
        search.reported = m["reported"].toInt();
        search.included = m["included"].toInt();
        search.seconds = m["seconds"].toDouble();
        const QJsonObject c = m["pipeline"].toObject();
        search.counts.targets = std::uint64_t(c["targets"].toDouble());
        search.counts.residues = std::uint64_t(c["residues"].toDouble());
        search.counts.past_msv = std::uint64_t(c["passed_msv"].toDouble());
        search.counts.past_bias = std::uint64_t(c["passed_bias"].toDouble());
        search.counts.past_viterbi = std::uint64_t(c["passed_viterbi"].toDouble());
        search.counts.past_forward = std::uint64_t(c["passed_forward"].toDouble());
        for (const auto& hv : m["hits"].toArray()) {
            const QJsonObject h = hv.toObject();
            profile::TargetHit hit;
            hit.target = std::size_t(h["target"].toDouble());
            hit.name = s(h["name"]);
            hit.description = s(h["description"]);
            hit.length = h["length"].toInt();
            hit.score = float(h["score"].toDouble());
            hit.pre_score = float(h["pre_score"].toDouble());
            hit.lnP = h["lnP"].toDouble();
            hit.expected_domains = float(h["expected_domains"].toDouble());
            hit.included = h["included"].toBool();
            hit.reported = true;
            hit.regions = h["regions"].toInt();
            hit.clustered = h["clustered"].toInt();
            hit.overlaps = h["overlaps"].toInt();
            hit.envelopes = h["envelopes"].toInt();
            hit.best_domain = h["best_domain"].toInt();
            for (const auto& dv : h["domains"].toArray()) hit.domains.push_back(domain_from(dv.toObject()));
            hit.reported_domains = h["reported_domains"].toInt();
            search.hits.push_back(std::move(hit));
        }
        r.models.push_back(std::move(mr));
    }
    return r;
}

std::vector<int> reported_domains(const profile::TargetHit& hit) {
    std::vector<int> out;
    for (std::size_t k = 0; k < hit.domains.size(); ++k)
        if (hit.domains[k].reported) out.push_back(int(k));
    return out;
}

void write_tables(const ProfileSearchResults& results, const std::string& path, bool domains) {
    AtomicOutput file(path);
    bool first = true;
    for (const auto& m : results.models) {
        profile::ProfileHmm hmm;  // what the tables name: the model's name, accession and length
        hmm.name = m.name;
        hmm.accession = m.accession;
        hmm.length = m.length;
        if (domains) profile::write_domain_table(file.stream(), hmm, m.search, first);
        else
            profile::write_target_table(file.stream(), hmm, m.search, first);
        first = false;
    }
    profile::write_table_tail(file.stream(), "alignscope (workbench profile search)", results.profile_label,
                              results.targets_label, "-");
    file.commit();
}

// ---- text ----------------------------------------------------------------

QString domain_alignment_text(const ProfileModelResult& model, const profile::TargetHit& hit, int index, int number,
                              int width) {
    const profile::DomainHit& d = hit.domains.at(std::size_t(index));
    const auto& a = d.alignment;
    QString out = QString::asprintf("  == domain %d  score: %.1f bits;  conditional E-value: %.2g\n", number, d.score,
                                    domain_c_evalue(model.search, d));
    const int name_width = int(std::max(model.name.size(), hit.name.size()));
    const int number_width = int(std::to_string(std::max({a.hmm_to, a.target_to, 1})).size());
    const int columns = int(a.model.size());
    // Like hmmsearch's 120-character lines: the residues get what the names and numbers leave.
    if (width <= 0) width = std::max(40, 120 - name_width - 2 * number_width - 6);
    int hmm_pos = a.hmm_from, target_pos = a.target_from;
    auto pad_name = [&](const std::string& name) { return QString::fromStdString(name).rightJustified(name_width); };
    const QString blank(name_width + number_width + 2, QLatin1Char(' '));
    for (int start = 0; start < columns; start += width) {
        const int n = std::min(width, columns - start);
        const std::string m = a.model.substr(std::size_t(start), std::size_t(n));
        const std::string t = a.target.substr(std::size_t(start), std::size_t(n));
        int hmm_end = hmm_pos - 1, target_end = target_pos - 1;
        for (char c : m)
            if (c != '.') ++hmm_end;
        for (char c : t)
            if (c != '-') ++target_end;
        if (!a.structure.empty())
            out += QStringLiteral("  %1 %2 CS\n")
                       .arg(blank)
                       .arg(QString::fromStdString(a.structure.substr(std::size_t(start), std::size_t(n))));
        out += QStringLiteral("  %1 %2 %3 %4\n")
                   .arg(pad_name(model.name))
                   .arg(hmm_pos, number_width)
                   .arg(QString::fromStdString(m))
                   .arg(hmm_end, number_width);
        out += QStringLiteral("  %1 %2\n")
                   .arg(blank)
                   .arg(QString::fromStdString(a.match.substr(std::size_t(start), std::size_t(n))));
        out += QStringLiteral("  %1 %2 %3 %4\n")
                   .arg(pad_name(hit.name))
                   .arg(target_pos, number_width)
                   .arg(QString::fromStdString(t))
                   .arg(target_end, number_width);
        out += QStringLiteral("  %1 %2 PP\n\n")
                   .arg(blank)
                   .arg(QString::fromStdString(a.posterior.substr(std::size_t(start), std::size_t(n))));
        hmm_pos = hmm_end + 1;
        target_pos = target_end + 1;
    }
    return out;
}

}  // namespace alignscope::ui
