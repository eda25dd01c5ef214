// Writing alignments: EMBOSS-style pair text, JSON Lines, TSV and SAM. The CLI,
// the project exports and the GUI's "copy as text" all use these writers, so a
// format looks the same wherever it comes from.
//
// JSON Lines: one object per alignment with query, target, score (user units),
// mode, query_begin, query_end, target_begin, target_end (1-based inclusive),
// query_length, target_length, cigar, identity, similarity (fractions 0..1),
// gaps, length, device, kernel; extra fields from AlignmentExtras when set.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/sequence.hpp>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

enum class OutputFormat { Pair, Json, Tsv, Sam };

OutputFormat parse_output_format(std::string_view name);  // throws Error naming --format
std::string_view to_string(OutputFormat format);

// Fields a search adds to an alignment (rank among a query's hits, statistics).
struct AlignmentExtras {
    std::optional<int> rank;
    std::optional<double> bits;
    std::optional<double> evalue;
    std::optional<std::uint64_t> db_size;
};

struct WriterContext {
    std::string program = "alignscope-cli";
    std::string command_line;
    ScoringScheme scheme;
    std::vector<const Sequence*> references;  // SAM @SQ lines (targets), in order
};

class AlignmentWriter {
public:
    virtual ~AlignmentWriter() = default;
    virtual void begin() {}
    virtual void write(const Alignment& alignment, const Sequence& query, const Sequence& target,
                       const AlignmentExtras& extras = {}) = 0;
    virtual void end() {}

    static std::unique_ptr<AlignmentWriter> create(OutputFormat format, std::ostream& out, WriterContext context);
};

// SAM's @SQ header lines, one per reference, as SAM output opens with them
// (a writer that learns its references as it goes writes them itself).
void write_sam_references(std::ostream& out, const std::vector<const Sequence*>& references);

// The EMBOSS-like markup line: '|' identical, ':' positive score, '.' other
// mismatch, ' ' gap.
std::string markup_line(std::string_view query_aligned, std::string_view target_aligned, const ScoringScheme& scheme);

// Scores in user units without a trailing ".0" for whole numbers ("123", "123.5").
std::string format_score(double user_score);

}  // namespace alignscope
