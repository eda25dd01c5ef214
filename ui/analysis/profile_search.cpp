// Profile search for the workbench: the engine's pipeline over one model file,
// its results to and from the project's JSON, and the HMMER-style alignment text.
#include "analysis/profile_search.hpp"
#include "analysis/analysis_job.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/hmmsearch_output.hpp>
#include <alignscope/profile/stored_search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>

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
        results.models.push_back(profile::stored_model(hmm, profile::search_profile(hmm, targets, *scanner,
                                                                                    request.settings, model_context)));
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

QByteArray parameters_json(const ProfileSearchResults& r) {
    return QByteArray::fromStdString(profile::stored_search_parameters(r));
}

QByteArray to_json(const ProfileSearchResults& r) { return QByteArray::fromStdString(profile::stored_search_json(r)); }

ProfileSearchResults profile_results_from_json(const QByteArray& json) {
    return profile::read_stored_search(std::string_view(json.constData(), std::size_t(json.size())));
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
