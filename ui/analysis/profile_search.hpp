// A profile HMM search as the workbench runs it: every model of a HMMER3 save
// file against the loaded sequences or a FASTA database, through the engine's
// hmmsearch pipeline (search_profile) on a profile filter scanner; the results
// kept as a JSON document in the project, and the HMMER-style text of a
// domain's alignment to the model.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>
#include <alignscope/profile/profile_targets.hpp>
#include <alignscope/profile/stored_search.hpp>
#include <alignscope/seq/sequence.hpp>

#include <QByteArray>
#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace alignscope::ui {

struct ProfileSearchRequest {
    std::vector<profile::ProfileHmm> models;  // one file's models, one alphabet
    std::string profile_label;                // "globins4.hmm"
    // Targets: the loaded records, or (when null) the FASTA file at database_path.
    std::shared_ptr<const std::vector<Sequence>> records;
    std::string database_path;
    std::string targets_label;  // "globins45.fa (45 sequences)"
    profile::PipelineSettings settings;
    std::string device = "cpu";  // a profile scanner: "cpu", "cpu-ref", "gpu:N", "auto"
};

// A model's results and the whole search: the engine's stored profile search,
// so that what the workbench keeps is what `hmmsearch --project` keeps.
using ProfileModelResult = profile::StoredModel;
using ProfileSearchResults = profile::StoredSearch;

// The loaded records in the model's residue code. Throws Error naming the
// record and the letter not in the alphabet, or a record over hmmsearch's
// 100,000 residues.
profile::ProfileTargets profile_targets_of(const std::vector<Sequence>& records, profile::ResidueAlphabet alphabet,
                                           const std::string& label);

// Runs every model in turn (worker thread). Progress counts targets over all
// models. Throws Error or Cancelled.
ProfileSearchResults run_profile_search(const ProfileSearchRequest& request, JobContext& context);

// The results as the project keeps them (profile::stored_search_json and
// stored_search_parameters), and back: from_json throws Error when the
// document is not one of ours.
QByteArray to_json(const ProfileSearchResults& results);
QByteArray parameters_json(const ProfileSearchResults& results);
ProfileSearchResults profile_results_from_json(const QByteArray& json);

// E-values as hmmsearch reports them: a sequence's (P x Z), a domain's
// conditional (P x domZ) and independent (P x Z) E-value.
double sequence_evalue(const profile::ModelSearch& search, const profile::TargetHit& hit);
double domain_c_evalue(const profile::ModelSearch& search, const profile::DomainHit& domain);
double domain_i_evalue(const profile::ModelSearch& search, const profile::DomainHit& domain);
// hmmsearch's "acc": the mean posterior probability of the envelope's residues.
double domain_accuracy(const profile::DomainHit& domain);

// One domain's alignment as hmmsearch prints it: the "== domain N" line, then
// blocks of the model line (name, hmm from, consensus, hmm to), the match
// line, the target line (name, from, residues, to) and the PP line, cut at
// `width` alignment columns (0: lines of 120 characters, as hmmsearch's).
// `index` is into hit.domains; `number` is the domain's number among the
// reported ones, as hmmsearch numbers them.
QString domain_alignment_text(const ProfileModelResult& model, const profile::TargetHit& hit, int index, int number,
                              int width = 0);

// The indices of a hit's reported domains, in order.
std::vector<int> reported_domains(const profile::TargetHit& hit);

// hmmsearch's --tblout (domains false) or --domtblout table of every model's
// search, columns and spacing as hmmsearch writes them, written atomically.
// Throws Error naming the file when it cannot be written.
void write_tables(const ProfileSearchResults& results, const std::string& path, bool domains);

}  // namespace alignscope::ui
