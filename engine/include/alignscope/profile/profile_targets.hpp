// Target sequences of a profile search, digitised once in the model's residue
// code and held back to back (the layout a GPU scanner uploads as it is), and
// their on-disk cache: a second search maps the codes, names and descriptions
// back instead of parsing the FASTA.
#pragma once

#include <alignscope/profile/residue_code.hpp>
#include <alignscope/search/database.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::profile {

struct ProfileTargets {
    ResidueAlphabet alphabet = ResidueAlphabet::Amino;
    std::string path;
    // A description is the header after the name and the blanks that follow
    // it, its own trailing blanks and tabs kept (hmmsearch prints them).
    std::vector<std::string> names, descriptions;
    std::vector<std::uint8_t> residues;  // every target's codes, back to back
    std::vector<std::uint64_t> offsets;  // target t is residues[offsets[t], offsets[t+1])
    std::uint64_t residue_count() const { return residues.size(); }
    std::size_t size() const { return names.size(); }
    const std::uint8_t* codes(std::size_t t) const { return residues.data() + offsets[t]; }
    int length(std::size_t t) const { return static_cast<int>(offsets[t + 1] - offsets[t]); }
};

// Reads FASTA/FASTQ (plain or gzip; "-" standard input) and digitises it for
// `alphabet`. Throws Error naming the file, the record and the letter that is
// not in the alphabet, a target over 100,000 residues (hmmsearch's limit), or
// a file without records.
ProfileTargets read_profile_targets(const std::string& path, ResidueAlphabet alphabet, std::size_t limit = 0);

// The cache of a database's targets in one alphabet, as the search database
// cache does it (search/database.hpp): keyed by the FASTA's size, mtime and
// CRC-32, the alphabet and its letter-to-code table; a CRC-32 of its own
// contents; a stale or damaged cache is reported and rebuilt, never trusted.
struct TargetCacheOptions {
    bool enabled = false;
    // Empty: beside the FASTA ("<FASTA>.<alphabet>.alspt") when that directory
    // is writable, else the user cache directory; a directory puts it there.
    std::string directory;
};

struct ProfileTargetsLoad {
    ProfileTargets targets;
    CacheOutcome outcome = CacheOutcome::Disabled;
    std::string cache_path;  // empty when disabled
    std::string reason;      // why a cache was rebuilt or could not be written
    double seconds = 0;      // wall time of the whole load
};

// read_profile_targets() through the cache (`options.enabled`), or without it.
// Throws read_profile_targets()'s errors, and an Error for a cache of standard
// input.
ProfileTargetsLoad load_profile_targets(const std::string& path, ResidueAlphabet alphabet,
                                        const TargetCacheOptions& options);

// The cache file load_profile_targets would use.
std::string profile_targets_cache_path(const std::string& path, ResidueAlphabet alphabet,
                                       const TargetCacheOptions& options);

}  // namespace alignscope::profile
