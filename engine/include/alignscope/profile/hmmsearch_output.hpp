// Profile search results written the way hmmsearch writes them, so that what
// reads hmmsearch's files reads ours: the main text report (per-sequence
// table, domain tables, alignments with the posterior line, pipeline
// statistics), the --tblout, --domtblout and --pfamtblout tables with their
// columns and spacing, and the -A Stockholm alignment of the included domains.
#pragma once

#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <ostream>
#include <string>

namespace alignscope::profile {

struct TextReportOptions {
    bool alignments = true;  // --noali turns them off
    int line_width = 120;    // hmmsearch's --textw default
    double seconds = 0;      // elapsed, for the statistics block
    // --acc: the alignments name the model by its accession where it has one
    // (targets read from FASTA have none, so their names stay).
    bool accessions = false;
};

// The report of one model's search (from "Query:" to "//").
void write_search_report(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search,
                         const PipelineSettings& settings, const TextReportOptions& options);

// --tblout rows (and the three header lines when `header`).
void write_target_table(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search, bool header);
// --domtblout rows (and the three header lines when `header`).
void write_domain_table(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search, bool header);
// --pfamtblout: one model's "Sequence scores" block (the reported targets,
// best first) and "Domain scores" block (their reported domains, best first
// by the same key as the targets: E-value unless --incT, else bit score).
// The tail (write_table_tail) follows the last model.
void write_pfam_table(std::ostream& out, const ModelSearch& search, const PipelineSettings& settings);

// The commented tail every table ends with.
void write_table_tail(std::ostream& out, const std::string& program, const std::string& query_file,
                      const std::string& target_file, const std::string& command_line);

// -A: the included domains of one model's search as a Stockholm alignment
// (match columns in model order, insert columns lower case, PP lines, RF line
// marking match columns). Returns the number of sequences written (0: none).
int write_domain_alignment(std::ostream& out, const ProfileHmm& hmm, const ModelSearch& search,
                           const ProfileTargets& targets);

}  // namespace alignscope::profile
