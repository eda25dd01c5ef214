// An alignment handed over column by column while it is being traced back, so
// that one too large for memory (a chromosome-scale pair) can go to disk as it
// is built: the long-pair pipeline calls a sink given in LongPairOptions, and
// io/alignment_stream.hpp writes the usual text formats from one.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>

#include <span>

namespace alignscope {

class AlignmentSink {
public:
    virtual ~AlignmentSink() = default;
    // Once, before any columns: mode, score, coordinates, lengths, device and
    // kernel. No CIGAR, aligned text or statistics yet (ids are the caller's).
    virtual void begin(const Alignment& header) = 0;
    // The next columns of the path, in path order, as runs of '=', 'X', 'I'
    // (query residue against a gap) and 'D' (target residue against a gap),
    // starting at query_begin / target_begin. The first run of a call may
    // continue the last run of the previous call (same operation): together
    // they are one run of the CIGAR.
    virtual void columns(std::span<const CigarOp> runs) = 0;
    // After the last column, once the path has re-scored to the score: the
    // alignment as it is returned (CIGAR, statistics; no aligned text). Not
    // called when the alignment fails or is cancelled: the sink's owner then
    // throws away what it received.
    virtual void end(const Alignment& alignment) = 0;
};

}  // namespace alignscope
