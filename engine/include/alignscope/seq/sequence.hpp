// A sequence record as read from FASTA or FASTQ.
#pragma once

#include <string>

namespace alignscope {

struct Sequence {
    std::string id;           // first word of the header line
    std::string description;  // rest of the header line, may be empty
    std::string residues;     // as read (wrapping and whitespace removed)
    std::string quality;      // FASTQ only; same length as residues
};

}  // namespace alignscope
