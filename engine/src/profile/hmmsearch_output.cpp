// hmmsearch's output formats, written with printf-style conversions because
// the column widths and number styles (%9.2g, %6.1f) are the format.
#include <alignscope/profile/hmmsearch_output.hpp>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <map>
#include <vector>

#include <unistd.h>

namespace alignscope::profile {

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    va_list copy;
    va_copy(copy, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string out(static_cast<std::size_t>(std::max(n, 0)), '\0');
    std::vsnprintf(out.data(), out.size() + 1, fmt, args);
    va_end(args);
    return out;
}

int text_width(long v) { return static_cast<int>(std::to_string(v).size()); }

const DomainHit& best_domain(const TargetHit& hit) { return hit.domains[static_cast<std::size_t>(hit.best_domain)]; }

std::size_t longest_name(const ModelSearch& search) {
    std::size_t w = 0;
    for (const auto& h : search.hits)
        if (h.reported) w = std::max(w, h.name.size());
    return w;
}

double accuracy(const DomainHit& d) {
    return d.expected_accuracy / (1.0 + std::fabs(static_cast<float>(d.env_to - d.env_from)));
}

void write_alignment_block(std::ostream& out, const std::string& model_name, const TargetHit& hit, const DomainHit& d,
                           int line_width) {
    const DomainAlignment& ad = d.alignment;
    const int n = static_cast<int>(ad.model.size());
    const int namewidth = static_cast<int>(std::max(model_name.size(), hit.name.size()));
    const int coordwidth = std::max(std::max(text_width(ad.hmm_from), text_width(ad.hmm_to)),
                                    std::max(text_width(ad.target_from), text_width(ad.target_to)));
    int aliwidth = line_width > 0 ? line_width - namewidth - 2 * coordwidth - 5 : n;
    if (aliwidth < n && aliwidth < 40) aliwidth = 40;
    int i1 = ad.target_from, k1 = ad.hmm_from;
    for (int pos = 0; pos < n; pos += aliwidth) {
        if (pos > 0) out << '\n';
        const int len = std::min(aliwidth, n - pos);
        int ni = 0, nk = 0;
        for (int z = pos; z < pos + len; ++z) {
            if (ad.model[static_cast<std::size_t>(z)] != '.') ++nk;
            if (ad.target[static_cast<std::size_t>(z)] != '-') ++ni;
        }
        const int k2 = k1 + nk - 1, i2 = i1 + ni - 1;
        auto piece = [&](const std::string& s) {
            return s.substr(static_cast<std::size_t>(pos), static_cast<std::size_t>(len));
        };
        if (!ad.structure.empty())
            out << format("  %*s %s CS\n", namewidth + coordwidth + 1, "", piece(ad.structure).c_str());
        if (!ad.reference.empty())
            out << format("  %*s %s RF\n", namewidth + coordwidth + 1, "", piece(ad.reference).c_str());
        out << format("  %*s %*d %s %-*d\n", namewidth, model_name.c_str(), coordwidth, k1, piece(ad.model).c_str(),
                      coordwidth, k2);
        out << format("  %*s %s\n", namewidth + coordwidth + 1, " ", piece(ad.match).c_str());
        if (ni > 0)
            out << format("  %*s %*d %s %-*d\n", namewidth, hit.name.c_str(), coordwidth, i1, piece(ad.target).c_str(),
                          coordwidth, i2);
        else
            out << format("  %*s %*s %s %*s\n", namewidth, hit.name.c_str(), coordwidth, "-", piece(ad.target).c_str(),
                          coordwidth, "-");
        out << format("  %*s %s PP\n", namewidth + coordwidth + 1, "", piece(ad.posterior).c_str());
        k1 += nk;
        i1 += ni;
    }
}

}  // namespace

void write_search_report(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search,
                         const PipelineSettings& settings, const TextReportOptions& options) {
    const int textw = options.line_width;
    out << format("Query:       %s  [M=%d]\n", hmm.name.c_str(), hmm.length);
    if (!hmm.accession.empty()) out << format("Accession:   %s\n", hmm.accession.c_str());
    if (!hmm.description.empty()) out << format("Description: %s\n", hmm.description.c_str());

    const int namew = static_cast<int>(std::max<std::size_t>(8, longest_name(search)));
    const int descw = textw > 0 ? std::max(32, textw - namew - 61) : 0;
    out << "Scores for complete sequences (score includes all domains):\n";
    out << format("  %22s  %22s  %8s\n", " --- full sequence ---", " --- best 1 domain ---", "-#dom-");
    out << format("  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s\n", "E-value", " score", " bias", "E-value", " score",
                  " bias", "  exp", "N", namew, "Sequence", "Description");
    out << format("  %9s %6s %5s  %9s %6s %5s  %5s %2s  %-*s %s\n", "-------", "------", "-----", "-------", "------",
                  "-----", " ----", "--", namew, "--------", "-----------");
    bool threshold_printed = false;
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        if (!h.included && !threshold_printed) {
            out << "  ------ inclusion threshold ------\n";
            threshold_printed = true;
        }
        const DomainHit& d = best_domain(h);
        out << format("%c %9.2g %6.1f %5.1f  %9.2g %6.1f %5.1f  %5.1f %2d  %-*s ", ' ', std::exp(h.lnP) * search.Z,
                      static_cast<double>(h.score), static_cast<double>(h.pre_score - h.score),
                      std::exp(d.lnP) * search.Z, static_cast<double>(d.score), static_cast<double>(d.bias),
                      static_cast<double>(h.expected_domains), h.reported_domains, namew, h.name.c_str());
        if (textw > 0) out << format(" %-.*s\n", descw, h.description.c_str());
        else
            out << " " << h.description << "\n";
    }
    if (search.reported == 0) out << "\n   [No hits detected that satisfy reporting thresholds]\n";
    out << "\n\n";

    out << format("Domain annotation for each sequence%s:\n", options.alignments ? " (and alignments)" : "");
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        const int dw = std::max(32, textw - static_cast<int>(h.name.size()) - 5);
        if (textw > 0) out << format(">> %s  %-.*s\n", h.name.c_str(), dw, h.description.c_str());
        else
            out << ">> " << h.name << "  " << h.description << "\n";
        if (h.reported_domains == 0) {
            out << "   [No individual domains that satisfy reporting thresholds (although complete target did)]\n\n";
            continue;
        }
        out << format(" %3s   %6s %5s %9s %9s %7s %7s %2s %7s %7s %2s %7s %7s %2s %4s\n", "#", "score", "bias",
                      "c-Evalue", "i-Evalue", "hmmfrom", "hmm to", "  ", "alifrom", "ali to", "  ", "envfrom", "env to",
                      "  ", "acc");
        out << format(" %3s   %6s %5s %9s %9s %7s %7s %2s %7s %7s %2s %7s %7s %2s %4s\n", "---", "------", "-----",
                      "---------", "---------", "-------", "-------", "  ", "-------", "-------", "  ", "-------",
                      "-------", "  ", "----");
        int nd = 0;
        for (const auto& d : h.domains) {
            if (!d.reported) continue;
            ++nd;
            const DomainAlignment& ad = d.alignment;
            out << format(" %3d %c %6.1f %5.1f %9.2g %9.2g %7d %7d %c%c", nd, d.included ? '!' : '?',
                          static_cast<double>(d.score), static_cast<double>(d.bias), std::exp(d.lnP) * search.domZ,
                          std::exp(d.lnP) * search.Z, ad.hmm_from, ad.hmm_to, ad.hmm_from == 1 ? '[' : '.',
                          ad.hmm_to == hmm.length ? ']' : '.');
            out << format(" %7d %7d %c%c", ad.target_from, ad.target_to, ad.target_from == 1 ? '[' : '.',
                          ad.target_to == h.length ? ']' : '.');
            out << format(" %7d %7d %c%c", d.env_from, d.env_to, d.env_from == 1 ? '[' : '.',
                          d.env_to == h.length ? ']' : '.');
            out << format(" %4.2f\n", accuracy(d));
        }
        if (options.alignments) {
            out << "\n  Alignments for each domain:\n";
            nd = 0;
            for (const auto& d : h.domains) {
                if (!d.reported) continue;
                ++nd;
                out << format("  == domain %d", nd);
                out << format("  score: %.1f bits", static_cast<double>(d.score));
                out << format(";  conditional E-value: %.2g\n", std::exp(d.lnP) * search.domZ);
                write_alignment_block(out, options.accessions && !hmm.accession.empty() ? hmm.accession : hmm.name, h,
                                      d, textw);
                out << "\n";
            }
        } else {
            out << "\n";
        }
    }
    if (search.reported == 0) out << "\n   [No targets detected that satisfy reporting thresholds]\n";
    out << "\n\n";

    const PipelineCounts& c = search.counts;
    const double ntargets = static_cast<double>(c.targets);
    out << "Internal pipeline statistics summary:\n";
    out << "-------------------------------------\n";
    out << format("Query model(s):              %15d  (%d nodes)\n", 1, hmm.length);
    out << format("Target sequences:            %15llu  (%llu residues searched)\n",
                  static_cast<unsigned long long>(c.targets), static_cast<unsigned long long>(c.residues));
    auto passed = [&](const char* label, std::uint64_t n, double F) {
        out << format("%-29s%15llu  (%.6g); expected %.1f (%.6g)\n", label, static_cast<unsigned long long>(n),
                      static_cast<double>(n) / ntargets, F * ntargets, F);
    };
    passed("Passed MSV filter:", c.past_msv, settings.F1);
    passed("Passed bias filter:", c.past_bias, settings.F1);
    passed("Passed Vit filter:", c.past_viterbi, settings.F2);
    passed("Passed Fwd filter:", c.past_forward, settings.F3);
    out << format("Initial search space (Z):    %15.0f  %s\n", search.Z,
                  settings.Z ? "[as set by --Z on cmdline]" : "[actual number of targets]");
    out << format("Domain search space  (domZ): %15.0f  %s\n", search.domZ,
                  settings.domZ ? "[as set by --domZ on cmdline]" : "[number of targets reported over threshold]");
    const double seconds = options.seconds > 0 ? options.seconds : search.seconds;
    out << format("# Elapsed: %.2f s\n", seconds);
    out << format("# Mc/sec: %.2f\n", seconds > 0 ? static_cast<double>(c.residues) * hmm.length / seconds / 1e6 : 0.0);
    out << "//\n";
}

void write_target_table(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search, bool header) {
    const int qnamew = static_cast<int>(std::max<std::size_t>(20, hmm.name.size()));
    const int tnamew = static_cast<int>(std::max<std::size_t>(20, longest_name(search)));
    const int qaccw = static_cast<int>(std::max<std::size_t>(10, hmm.accession.size()));
    const int taccw = 10;
    if (header) {
        out << format("#%*s %22s %22s %33s\n", tnamew + qnamew + taccw + qaccw + 2, "", "--- full sequence ----",
                      "--- best 1 domain ----", "--- domain number estimation ----");
        out << format("#%-*s %-*s %-*s %-*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n", tnamew - 1,
                      " target name", taccw, "accession", qnamew, "query name", qaccw, "accession", "  E-value",
                      " score", " bias", "  E-value", " score", " bias", "exp", "reg", "clu", " ov", "env", "dom",
                      "rep", "inc", "description of target");
        out << format("#%*s %*s %*s %*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n", tnamew - 1,
                      "-------------------", taccw, "----------", qnamew, "--------------------", qaccw, "----------",
                      "---------", "------", "-----", "---------", "------", "-----", "---", "---", "---", "---", "---",
                      "---", "---", "---", "---------------------");
    }
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        const DomainHit& d = best_domain(h);
        int included = 0;
        for (const auto& dom : h.domains) included += dom.included;
        out << format("%-*s %-*s %-*s %-*s %9.2g %6.1f %5.1f %9.2g %6.1f %5.1f %5.1f %3d %3d %3d %3d %3d %3d %3d %s\n",
                      tnamew, h.name.c_str(), taccw, "-", qnamew, hmm.name.c_str(), qaccw,
                      hmm.accession.empty() ? "-" : hmm.accession.c_str(), std::exp(h.lnP) * search.Z,
                      static_cast<double>(h.score), static_cast<double>(h.pre_score - h.score),
                      std::exp(d.lnP) * search.Z, static_cast<double>(d.score), static_cast<double>(d.bias),
                      static_cast<double>(h.expected_domains), h.regions, h.clustered, h.overlaps, h.envelopes,
                      static_cast<int>(h.domains.size()), h.reported_domains, included,
                      h.description.empty() ? "-" : h.description.c_str());
    }
}

void write_domain_table(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search, bool header) {
    const int qnamew = static_cast<int>(std::max<std::size_t>(20, hmm.name.size()));
    const int tnamew = static_cast<int>(std::max<std::size_t>(20, longest_name(search)));
    const int qaccw = static_cast<int>(std::max<std::size_t>(10, hmm.accession.size()));
    const int taccw = 10;
    if (header) {
        out << format("#%*s %22s %40s %11s %11s %11s\n", tnamew + qnamew - 1 + 15 + taccw + qaccw, "",
                      "--- full sequence ---", "-------------- this domain -------------", "hmm coord", "ali coord",
                      "env coord");
        out << format(
            "#%-*s %-*s %5s %-*s %-*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s %5s %5s %4s %s\n",
            tnamew - 1, " target name", taccw, "accession", "tlen", qnamew, "query name", qaccw, "accession", "qlen",
            "E-value", "score", "bias", "#", "of", "c-Evalue", "i-Evalue", "score", "bias", "from", "to", "from", "to",
            "from", "to", "acc", "description of target");
        out << format("#%*s %*s %5s %*s %*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s %5s %5s %4s %s\n",
                      tnamew - 1, "-------------------", taccw, "----------", "-----", qnamew, "--------------------",
                      qaccw, "----------", "-----", "---------", "------", "-----", "---", "---", "---------",
                      "---------", "------", "-----", "-----", "-----", "-----", "-----", "-----", "-----", "----",
                      "---------------------");
    }
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        int nd = 0;
        for (const auto& d : h.domains) {
            if (!d.reported) continue;
            ++nd;
            const DomainAlignment& ad = d.alignment;
            out << format(
                "%-*s %-*s %5d %-*s %-*s %5d %9.2g %6.1f %5.1f %3d %3d %9.2g %9.2g %6.1f %5.1f %5d %5d %5d %5d %5d "
                "%5d %4.2f %s\n",
                tnamew, h.name.c_str(), taccw, "-", h.length, qnamew, hmm.name.c_str(), qaccw,
                hmm.accession.empty() ? "-" : hmm.accession.c_str(), hmm.length, std::exp(h.lnP) * search.Z,
                static_cast<double>(h.score), static_cast<double>(h.pre_score - h.score), nd, h.reported_domains,
                std::exp(d.lnP) * search.domZ, std::exp(d.lnP) * search.Z, static_cast<double>(d.score),
                static_cast<double>(d.bias), ad.hmm_from, ad.hmm_to, ad.target_from, ad.target_to, d.env_from, d.env_to,
                accuracy(d), h.description.empty() ? "-" : h.description.c_str());
        }
    }
}

void write_pfam_table(std::ostream& out, const ModelSearch& search, const PipelineSettings& settings) {
    // As wide as the longest reported name (hmmsearch's, checked with -E 1e-70,
    // where longer names go unreported).
    const int namew = static_cast<int>(std::max<std::size_t>(20, longest_name(search)));
    out << "# Sequence scores\n# ---------------\n#\n";
    out << format("# %-*s %6s %9s %3s %5s %5s    %s\n", namew - 1, "name", " bits", "  E-value", "n", "exp", " bias",
                  "description");
    out << format("# %*s %6s %9s %3s %5s %5s    %s\n", namew - 1, "-------------------", "------", "---------", "---",
                  "-----", "-----", "---------------------");
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        out << format("%-*s  %6.1f %9.2g %3d %5.1f %5.1f    %s\n", namew, h.name.c_str(), static_cast<double>(h.score),
                      std::exp(h.lnP) * search.Z, static_cast<int>(h.domains.size()),
                      static_cast<double>(h.expected_domains), static_cast<double>(h.pre_score - h.score),
                      h.description.empty() ? "-" : h.description.c_str());
    }
    out << "\n";

    // The reported domains of the reported targets, each with its number among
    // its target's reported domains, ordered as the targets are.
    struct Row {
        const TargetHit* hit;
        const DomainHit* domain;
        int number;
    };
    std::vector<Row> rows;
    for (const auto& h : search.hits) {
        if (!h.reported) continue;
        int number = 0;
        for (const auto& d : h.domains)
            if (d.reported) rows.push_back({&h, &d, ++number});
    }
    const bool by_E = !settings.include_T;
    std::stable_sort(rows.begin(), rows.end(), [by_E](const Row& a, const Row& b) {
        const double ka = by_E ? -a.domain->lnP : a.domain->score, kb = by_E ? -b.domain->lnP : b.domain->score;
        if (ka != kb) return ka > kb;
        if (a.hit->name != b.hit->name) return a.hit->name < b.hit->name;
        return a.domain->alignment.target_from < b.domain->alignment.target_from;
    });
    out << "# Domain scores\n# -------------\n#\n";
    out << format("# %-*s %6s %9s %5s %5s %6s %6s %6s %6s %6s %6s     %s\n", namew - 1, " name", "bits", "E-value",
                  "hit", "bias", "env-st", "env-en", "ali-st", "ali-en", "hmm-st", "hmm-en", "description");
    out << format("# %*s %6s %9s %5s %5s %6s %6s %6s %6s %6s %6s      %s\n", namew - 1, "-------------------", "------",
                  "---------", "-----", "-----", "------", "------", "------", "------", "------", "------",
                  "---------------------");
    for (const Row& r : rows) {
        const DomainHit& d = *r.domain;
        const DomainAlignment& ad = d.alignment;
        out << format("%-*s  %6.1f %9.2g %5d %5.1f %6d %6d %6d %6d %6d %6d     %s\n", namew, r.hit->name.c_str(),
                      static_cast<double>(d.score), std::exp(d.lnP) * search.Z, r.number, static_cast<double>(d.bias),
                      d.env_from, d.env_to, ad.target_from, ad.target_to, ad.hmm_from, ad.hmm_to,
                      r.hit->description.empty() ? "-" : r.hit->description.c_str());
    }
}

void write_table_tail(std::ostream& out, const std::string& program, const std::string& query_file,
                      const std::string& target_file, const std::string& command_line) {
    char cwd[4096];
    const std::string dir = getcwd(cwd, sizeof cwd) ? cwd : "[unknown]";
    const std::time_t now = std::time(nullptr);
    char stamp[64];
    ctime_r(&now, stamp);
    out << "#\n";
    out << "# Program:         " << program << "\n";
    out << "# Version:         " << ALIGNSCOPE_VERSION << " (AlignScope; HMMER 3.3.2 compatible tables)\n";
    out << "# Pipeline mode:   SEARCH\n";
    out << "# Query file:      " << query_file << "\n";
    out << "# Target file:     " << target_file << "\n";
    out << "# Option settings: " << command_line << "\n";
    out << "# Current dir:     " << dir << "\n";
    out << "# Date:            " << stamp;
    out << "# [ok]\n";
}

namespace {

// One included domain laid out on the model's nodes: a residue (or '-') per
// match node and the insertions after each node, with their posteriors.
struct AlignmentRow {
    std::string name, description;
    std::vector<char> match, match_pp;           // per node 1..M
    std::vector<float> match_value;              // posterior of M states, -1 where none
    std::vector<std::string> insert, insert_pp;  // after node k, k = 0..M
};

std::vector<AlignmentRow> alignment_rows(const ProfileHmm& hmm, const ModelSearch& search) {
    using Row = AlignmentRow;
    const int M = hmm.length;
    std::vector<Row> rows;
    for (const auto& h : search.hits) {
        if (!h.included) continue;
        for (const auto& d : h.domains) {
            if (!d.included || d.alignment.model.empty()) continue;
            const DomainAlignment& ad = d.alignment;
            Row r;
            r.name = h.name + "/" + std::to_string(ad.target_from) + "-" + std::to_string(ad.target_to);
            r.description = h.description.empty() ? h.name : h.description;  // as hmmsearch does
            r.match.assign(static_cast<std::size_t>(M + 1), '-');
            r.match_pp.assign(static_cast<std::size_t>(M + 1), '.');
            r.match_value.assign(static_cast<std::size_t>(M + 1), -1.0f);
            r.insert.assign(static_cast<std::size_t>(M + 1), "");
            r.insert_pp.assign(static_cast<std::size_t>(M + 1), "");
            int k = ad.hmm_from - 1;
            for (std::size_t z = 0; z < ad.model.size(); ++z) {
                if (ad.model[z] == '.') {
                    r.insert[static_cast<std::size_t>(k)] += ad.target[z];
                    r.insert_pp[static_cast<std::size_t>(k)] += ad.posterior[z];
                } else {
                    ++k;
                    r.match[static_cast<std::size_t>(k)] = ad.target[z];
                    r.match_pp[static_cast<std::size_t>(k)] = ad.posterior[z];
                    // hmmsearch averages the probabilities as its PP line encodes them.
                    if (ad.target[z] != '-') {
                        const char c = ad.posterior[z];
                        r.match_value[static_cast<std::size_t>(k)] = c == '0'   ? 0.01f
                                                                     : c == '*' ? 1.0f
                                                                                : static_cast<float>((c - '0') / 10.0);
                    }
                }
            }
            rows.push_back(std::move(r));
        }
    }
    return rows;
}

// Consensus posterior: the mean over the sequences with a residue in each match column.
std::vector<char> consensus_posterior(const std::vector<AlignmentRow>& rows, int M) {
    std::vector<char> pp_cons(static_cast<std::size_t>(M + 1), '.');
    for (int k = 1; k <= M; ++k) {
        double total = 0;
        int used = 0;
        for (const auto& r : rows)
            if (r.match_value[static_cast<std::size_t>(k)] >= 0) {
                total += r.match_value[static_cast<std::size_t>(k)];
                ++used;
            }
        if (used > 0) {
            const float p = static_cast<float>(total / used);
            pp_cons[static_cast<std::size_t>(k)] =
                (p + 0.05 >= 1.0) ? '*' : static_cast<char>(static_cast<int>((p + 0.05) * 10.0) + '0');
        }
    }
    return pp_cons;
}

}  // namespace

int write_domain_alignment(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search,
                           const ProfileTargets& targets) {
    (void)targets;
    const int M = hmm.length;
    const std::vector<AlignmentRow> rows = alignment_rows(hmm, search);
    if (rows.empty()) return 0;
    std::vector<std::size_t> width(static_cast<std::size_t>(M + 1), 0);
    for (const auto& r : rows)
        for (int k = 0; k <= M; ++k)
            width[static_cast<std::size_t>(k)] =
                std::max(width[static_cast<std::size_t>(k)], r.insert[static_cast<std::size_t>(k)].size());
    // Insertions inside the model: the first half flush left, the rest flush
    // right (as hmmsearch lays them out); before node 1 all flush right.
    auto place = [&](const std::string& ins, int k, char pad) {
        const std::size_t w = width[static_cast<std::size_t>(k)];
        if (ins.size() >= w) return ins;
        const std::size_t left = k == 0 ? 0 : ins.size() / 2;
        return ins.substr(0, left) + std::string(w - ins.size(), pad) + ins.substr(left);
    };
    auto line_of = [&](const std::vector<char>& match, const std::vector<std::string>& insert) {
        std::string s;
        for (int k = 0; k <= M; ++k) {
            if (k > 0) s += match[static_cast<std::size_t>(k)];
            s += place(insert[static_cast<std::size_t>(k)], k, '.');
        }
        return s;
    };
    std::size_t maxname = 0;
    for (const auto& r : rows) maxname = std::max(maxname, r.name.size());
    const int seqw = static_cast<int>(maxname + 8);  // "#=GR " + name + " PP" line up with the sequences
    out << "# STOCKHOLM 1.0\n";
    out << "#=GF ID " << hmm.name << "\n";
    if (!hmm.accession.empty()) out << "#=GF AC " << hmm.accession << "\n";
    if (!hmm.description.empty()) out << "#=GF DE " << hmm.description << "\n";
    out << "#=GF AU alignscope-cli hmmsearch (AlignScope " << ALIGNSCOPE_VERSION << ")\n\n";
    for (const auto& r : rows)
        out << format("#=GS %-*s DE [subseq from] %s\n", static_cast<int>(maxname), r.name.c_str(),
                      r.description.c_str());
    if (!rows.empty()) out << "\n";
    const std::vector<char> pp_cons = consensus_posterior(rows, M);
    std::vector<std::string> no_inserts(static_cast<std::size_t>(M + 1));
    std::vector<char> rf(static_cast<std::size_t>(M + 1), 'x');
    std::vector<std::string> seq_lines, pp_lines;
    for (const auto& r : rows) {
        seq_lines.push_back(line_of(r.match, r.insert));
        pp_lines.push_back(line_of(r.match_pp, r.insert_pp));
    }
    const std::string cons_line = line_of(pp_cons, no_inserts), rf_line = line_of(rf, no_inserts);
    // Blocks of 200 columns, as Stockholm files are usually written.
    constexpr std::size_t kColumns = 200;
    for (std::size_t from = 0; from < rf_line.size(); from += kColumns) {
        if (from > 0) out << "\n";
        auto cut = [&](const std::string& line) { return line.substr(from, kColumns); };
        for (std::size_t i = 0; i < rows.size(); ++i) {
            out << format("%-*s %s\n", seqw, rows[i].name.c_str(), cut(seq_lines[i]).c_str());
            out << format("#=GR %-*s PP %s\n", static_cast<int>(maxname), rows[i].name.c_str(),
                          cut(pp_lines[i]).c_str());
        }
        out << format("%-*s %s\n", seqw, "#=GC PP_cons", cut(cons_line).c_str());
        out << format("%-*s %s\n", seqw, "#=GC RF", cut(rf_line).c_str());
    }
    out << "//\n";
    return static_cast<int>(rows.size());
}

}  // namespace alignscope::profile
