// Profile HMMs as HMMER3 writes them in its text save files (HMMER3/f and the
// older 3/b-3/e): the header (name, length, alphabet, STATS LOCAL calibration,
// composition) and the probabilities of every node. One file may hold several
// models, one after another, each closed by "//".
#pragma once

#include <alignscope/profile/residue_code.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::profile {

// The seven transitions of a Plan7 node, in the save file's column order.
enum Transition : int { kMM = 0, kMI, kMD, kIM, kII, kDM, kDD, kTransitions };

// Score calibration from the STATS LOCAL lines: Gumbel location and slope for
// the MSV and Viterbi filter scores, exponential-tail location and slope for
// Forward scores (all in bits).
struct ProfileStatistics {
    double msv_mu = 0, msv_lambda = 0;
    double viterbi_mu = 0, viterbi_lambda = 0;
    double forward_tau = 0, forward_lambda = 0;
};

struct ProfileHmm {
    std::string format;  // "HMMER3/f", "HMMER3/e", ...
    std::string name;
    std::string accession;    // may be empty
    std::string description;  // may be empty
    int length = 0;           // M, the number of match states
    ResidueAlphabet alphabet = ResidueAlphabet::Amino;
    int max_length = 0;  // MAXL, 0 when absent
    // Per node 1..M; index 0 is a blank so that node k is at [k].
    std::string consensus, reference, model_mask, structure;
    std::vector<int> alignment_map;
    int sequences = 0;
    double effective_sequences = 0;
    std::optional<std::uint32_t> checksum;
    std::optional<std::pair<double, double>> gathering, trusted, noise;  // GA, TC, NC
    std::optional<ProfileStatistics> statistics;
    std::vector<float> composition;  // COMPO: K mean match emission probabilities; empty when absent

    // Probabilities (not the file's negative natural logs): match[k*K + x] for
    // k in 1..M, insert[k*K + x] for k in 0..M, transitions[k*7 + t] for k in 0..M.
    std::vector<float> match, insert, transitions;

    std::string path;  // where it was read
    int line = 0;      // 1-based line of its format tag

    int canonical() const { return ResidueCode::of(alphabet).canonical(); }
    float match_probability(int k, int x) const { return match[static_cast<std::size_t>(k * canonical() + x)]; }
    float transition(int k, Transition t) const { return transitions[static_cast<std::size_t>(k * kTransitions + t)]; }
};

// Reads every model of a save file (plain or gzip-compressed; "-" reads
// standard input). Throws Error "FILE:LINE: ..." for anything malformed, and a
// clear error for binary hmmpress files and HMMER2 files. An empty file is an
// error too.
std::vector<ProfileHmm> read_hmm_file(const std::string& path);

// The same, from text already in memory; `path` only names it in errors.
std::vector<ProfileHmm> parse_hmm_text(const std::string& text, const std::string& path);

}  // namespace alignscope::profile
