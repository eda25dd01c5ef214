// A CIGAR as the GPU's traceback pass packs it ('=' and 'X' as M, runs
// merged, length << 2 | code): what PathCompletion takes, for the kernels'
// tests that feed it paths made from reference alignments.
#pragma once

#include "../../kernels/pairwise/pass_types.hpp"

#include <alignscope/align/cigar.hpp>

#include <cstdint>
#include <vector>

inline std::vector<std::uint32_t> packed_runs(const alignscope::Cigar& cigar) {
    using namespace alignscope::kernels;
    std::vector<std::uint32_t> runs;
    std::uint32_t code = 3, length = 0;
    for (const alignscope::CigarOp& op : cigar.ops()) {
        const std::uint32_t c = op.op == 'I' ? kCigarI : op.op == 'D' ? kCigarD : kCigarM;
        if (c != code && length) runs.push_back(length << 2 | code);
        if (c != code) length = 0;
        code = c;
        length += op.length;
    }
    if (length) runs.push_back(length << 2 | code);
    return runs;
}
