// What a database search chooses when the user leaves a choice open, shared by
// `alignscope-cli search` and the workbench so both run the same search: the gap
// costs BLAST publishes Karlin-Altschul statistics for (so E-values exist out
// of the box), the scanner device for "auto", and how a search job and its hits
// are kept in a project.
#pragma once

#include <alignscope/search/scan.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/store/job_spec.hpp>
#include <alignscope/store/results.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace alignscope {

// Gap costs in our convention: a gap of length k costs open + (k-1)*extend.
struct GapCosts {
    double open = 10;
    double extend = 0.5;
    bool operator==(const GapCosts&) const = default;
};

// BLAST's default gap costs for a built-in matrix (the row its statistics
// tables mark as the matrix's default; BLAST's existence + extension is our
// open): e.g. BLOSUM62 12/1 (BLAST 11/1), BLOSUM45 and PAM250 16/2, PAM30 10/1,
// EDNAFULL 16/6. The name is matched case-insensitively, with "DNAFULL" for
// EDNAFULL and an EMBOSS-style "E" prefix (EBLOSUM62) accepted. nullopt when
// BLAST has no default for it.
std::optional<GapCosts> blast_default_gaps(std::string_view matrix);

// The gap costs a search uses when the user gives none. `matrix` empty means
// the search's default matrix (BLOSUM62 for protein, EDNAFULL for nucleotides);
// match/mismatch scoring uses BLASTN's 5/2 (our 7/2) for +2/-3. Anything else
// gets the general default 10/0.5, and `note` (when given) says so.
GapCosts default_search_gaps(std::string_view matrix, std::optional<double> match, std::optional<double> mismatch,
                             AlphabetKind alphabet, std::string* note = nullptr);

// The scanner spec to create for `setup`: `spec` when every device it names can
// scan the setup; for "auto", "cpu" when a GPU cannot (`note` says which and
// why); otherwise throws Error naming `option` (e.g. "--device"), the device
// and the reason.
std::string choose_scan_device(const ScannerRegistry& registry, const std::string& spec, const ScanSetup& setup,
                               std::string* note = nullptr, std::string_view option = "device");

// The settings of a search job as a project keeps them: mode, scheme, device,
// threads, streams and memory budget, and in `parameters` top, traceback and the
// filters. The caller adds what it knows of the inputs.
store::JobSpec search_job_spec(std::string command, const ScanSetup& setup, const SearchOptions& search,
                               const DeviceInfo& device);

// A hit as a project stores it: ids, rank, score (scaled), bits, E-value,
// coordinates (0 without traceback) and lengths.
store::Hit to_store_hit(const SearchHit& hit);

}  // namespace alignscope
