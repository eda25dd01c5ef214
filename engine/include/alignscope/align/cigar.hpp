// CIGAR strings and the self-checks built on them (ksw2's lesson): a returned
// alignment is re-scored from its CIGAR and must equal the reported score.
//
// Operations (extended SAM CIGAR, query = read, target = reference):
//   '=' match of identical residues, 'X' mismatch, 'I' query residue against a
//   gap (consumes query), 'D' target residue against a gap (consumes target).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

struct ScoringScheme;
struct Alignment;
struct AlignmentStats;

struct CigarOp {
    char op = '=';
    std::uint32_t length = 0;
    bool operator==(const CigarOp&) const = default;
};

class Cigar {
public:
    Cigar() = default;
    // Appends one column; merges with the last run when the operation repeats.
    void push(char op, std::uint32_t count = 1);
    void reverse();
    bool empty() const { return ops_.empty(); }
    void reserve(std::size_t runs) { ops_.reserve(runs); }
    // Replaces the runs with [first, last), which must be what push() builds:
    // no empty run, no two neighbours with the same operation. The capacity is
    // kept (a result buffer reused from job to job).
    void assign(const CigarOp* first, const CigarOp* last) { ops_.assign(first, last); }
    // No runs, the capacity kept (a result buffer reused from job to job).
    void clear() { ops_.clear(); }
    const std::vector<CigarOp>& ops() const { return ops_; }
    std::int64_t query_span() const;   // '=' 'X' 'I'
    std::int64_t target_span() const;  // '=' 'X' 'D'
    std::int64_t columns() const;
    std::string to_string() const;
    // Parses "3=1X2I"; 'M' is accepted and later resolved against the residues.
    // Throws Error on malformed text.
    static Cigar parse(std::string_view text);
    bool operator==(const Cigar&) const = default;

private:
    std::vector<CigarOp> ops_;
};

// Score of the alignment the CIGAR describes, starting at the 1-based positions
// query_begin/target_begin of the encoded residues, under `scheme` (scaled).
// Gap runs cost open + (k-1)*extend; free end gaps are not part of a CIGAR.
// Throws Error when the CIGAR runs past either sequence or an '='/'X' disagrees
// with the residues.
std::int64_t rescore(const Cigar& cigar, std::string_view query, std::string_view target, std::int64_t query_begin,
                     std::int64_t target_begin, const ScoringScheme& scheme);

// Fills query_aligned, target_aligned and stats of `a` from its CIGAR and
// coordinates; converts 'M' runs into '='/'X'. Returns the score of the path
// (what rescore returns), computed in the same pass, so a caller that checks
// an aligner's CIGAR against its score need not walk it twice. Throws Error as
// rescore does.
std::int64_t complete_alignment(Alignment& a, std::string_view query, std::string_view target,
                                const ScoringScheme& scheme);

}  // namespace alignscope
