// Reading and digitising the targets of a profile search.
#include <alignscope/error.hpp>
#include <alignscope/profile/profile_targets.hpp>
#include <alignscope/seq/sequence_reader.hpp>

namespace alignscope::profile {

ProfileTargets read_profile_targets(const std::string& path, ResidueAlphabet alphabet, std::size_t limit) {
    const ResidueCode& code = ResidueCode::of(alphabet);
    ProfileTargets targets;
    targets.alphabet = alphabet;
    targets.path = path;
    targets.offsets.push_back(0);
    SequenceReader reader(path);
    Sequence record;
    std::vector<std::uint8_t> codes;
    try {
        while ((limit == 0 || targets.size() < limit) && reader.next(record)) {
            const std::size_t bad = code.digitise(record.residues, codes);
            if (bad != std::string::npos)
                throw Error(path + ":" + std::to_string(reader.line()) + ": sequence '" + record.id + "' has '" +
                            std::string(1, record.residues[bad]) + "' at residue " + std::to_string(bad + 1) +
                            ", which is not in the " + std::string(code.name()) + " alphabet of the profile");
            if (codes.size() > 100000)
                throw Error(path + ":" + std::to_string(reader.line()) + ": sequence '" + record.id + "' is " +
                            std::to_string(codes.size()) +
                            " residues long; profile search takes targets of up to 100,000 residues (as hmmsearch)");
            targets.names.push_back(record.id);
            targets.descriptions.push_back(record.description);
            targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
            targets.offsets.push_back(targets.residues.size());
        }
    } catch (const std::bad_alloc&) {
        const std::size_t count = targets.size(), residues = targets.residues.size();
        targets = {};
        throw Error(path + ": out of memory after " + std::to_string(count) + " targets (" +
                    std::to_string(residues >> 20) +
                    " MiB of residues); split the database into smaller files, "
                    "or use a machine with more memory");
    }
    if (targets.size() == 0) throw Error(path + ": no sequences in the file (expected FASTA or FASTQ records)");
    return targets;
}

}  // namespace alignscope::profile
