// Checking one tested alignment against the reference: scores, end points, a
// CIGAR that rescores to the claimed score, and a readable mismatch report.
#include "verify_detail.hpp"

#include <alignscope/bench/verify.hpp>

#include <alignscope/align/cigar.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace alignscope {

namespace {

std::string user_score(const ScoringScheme& scheme, std::int64_t scaled) {
    return detail::format_number(scheme.to_user(scaled));
}

std::string coordinates(std::int64_t a, std::int64_t b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// Span and rescoring checks of one side's CIGAR; `who` prefixes the sentence.
void check_cigar(const Alignment& a, std::string_view query, std::string_view target, const ScoringScheme& scheme,
                 const std::string& who, std::vector<std::string>& problems) {
    if (a.cigar.empty()) {
        if (a.score != 0)
            problems.push_back(who + "has no CIGAR for an alignment of score " + user_score(scheme, a.score));
        return;
    }
    const std::int64_t query_span = a.query_end - a.query_begin + 1;
    const std::int64_t target_span = a.target_end - a.target_begin + 1;
    if (a.cigar.query_span() != query_span || a.cigar.target_span() != target_span) {
        problems.push_back(who + "CIGAR spans " + std::to_string(a.cigar.query_span()) + " query and " +
                           std::to_string(a.cigar.target_span()) + " target residues, but the coordinates span " +
                           std::to_string(query_span) + " and " + std::to_string(target_span));
        return;
    }
    try {
        const std::int64_t rescored = rescore(a.cigar, query, target, a.query_begin, a.target_begin, scheme);
        if (rescored != a.score)
            problems.push_back(who + "CIGAR rescores to " + user_score(scheme, rescored) + ", not the reported " +
                               user_score(scheme, a.score));
    } catch (const Error& e) {
        problems.push_back(who + "CIGAR does not fit the sequences: " + e.what());
    }
}

}  // namespace

std::vector<std::string> check_alignment(const Alignment& tested, const Alignment& reference, std::string_view query,
                                         std::string_view target, const ScoringScheme& scheme,
                                         const AlignOptions& options) {
    std::vector<std::string> problems;
    if (tested.score != reference.score)
        problems.push_back("score " + user_score(scheme, tested.score) + " but the reference gives " +
                           user_score(scheme, reference.score));
    const auto m = static_cast<std::int64_t>(query.size());
    const auto n = static_cast<std::int64_t>(target.size());
    if (tested.query_length != m || tested.target_length != n)
        problems.push_back("reports lengths " + coordinates(tested.query_length, tested.target_length) +
                           " for sequences of lengths " + coordinates(m, n));
    if (tested.query_end != reference.query_end || tested.target_end != reference.target_end)
        problems.push_back("end " + coordinates(tested.query_end, tested.target_end) + " but the reference gives " +
                           coordinates(reference.query_end, reference.target_end));
    if (tested.query_begin != reference.query_begin || tested.target_begin != reference.target_begin)
        problems.push_back("begin " + coordinates(tested.query_begin, tested.target_begin) +
                           " but the reference gives " + coordinates(reference.query_begin, reference.target_begin));
    if (options.traceback) {
        if (reference.has_traceback() && !tested.has_traceback())
            problems.push_back("no CIGAR although traceback was asked for");
        else
            check_cigar(tested, query, target, scheme, "", problems);
        check_cigar(reference, query, target, scheme, "reference ", problems);
    }
    return problems;
}

namespace {

std::string abbreviate(std::string_view text, std::size_t max_length) {
    if (text.size() <= max_length) return std::string(text);
    const std::size_t half = max_length / 2;
    return std::string(text.substr(0, half)) + "..." + std::string(text.substr(text.size() - half)) + " (" +
           std::to_string(text.size()) + " long)";
}

std::string describe_result(const Alignment& a, const ScoringScheme& scheme, std::size_t max_length) {
    std::string line = "score " + user_score(scheme, a.score) + ", query " + std::to_string(a.query_begin) + "-" +
                       std::to_string(a.query_end) + ", target " + std::to_string(a.target_begin) + "-" +
                       std::to_string(a.target_end);
    if (a.has_traceback()) line += ", CIGAR " + abbreviate(a.cigar.to_string(), max_length);
    if (!a.kernel.empty()) line += " [" + a.kernel + "]";
    return line;
}

}  // namespace

std::string VerifyMismatch::describe(std::size_t max_residues) const {
    std::ostringstream out;
    const ScoringScheme& scheme = config->scheme;
    out << "MISMATCH pair " << pair->index << " (" << to_string(pair->length_class) << "): " << config->describe()
        << "\n";
    out << "  query  " << pair->query.residues.size() << ": " << abbreviate(pair->query.residues, max_residues) << "\n";
    out << "  target " << pair->target.residues.size() << ": " << abbreviate(pair->target.residues, max_residues)
        << "\n";
    for (const auto& problem : problems) out << "  - " << problem << "\n";
    out << "  " << tested_device << ": " << describe_result(tested, scheme, max_residues) << "\n";
    out << "  " << reference_device << ": " << describe_result(reference, scheme, max_residues) << "\n";
    return out.str();
}

}  // namespace alignscope
