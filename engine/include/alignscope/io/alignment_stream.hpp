// One alignment written to a file while it is produced: an AlignmentSink (the
// long-pair pipeline's streamed stage 3 calls it) that writes, byte for byte,
// what AlignmentWriter writes for the same alignment in the same format (the
// pair format's "# Rundate:" line aside: it tells when it was written), with
// memory bounded by one block, not by the alignment's length.
//
//   pair  the 50-column blocks go to a spool file beside the output as the
//         columns arrive (the alignment's header, which precedes them, holds
//         the length, identity and gap counts known only at the end); commit()
//         writes the file header, the alignment's header and then the spool.
//   json  `{"cigar":"` and the CIGAR text go straight to the output as the
//         columns arrive (the record's keys are sorted: cigar comes first);
//         commit() writes the other fields.
//   tsv, sam  their records hold no aligned text: written at commit() from
//         the alignment end() received (CIGAR and statistics).
//
// The output appears whole on commit() or not at all: until then it is a
// temporary file in the destination's directory (AtomicOutput), and it goes,
// with the spool, when the writer is destroyed uncommitted (an error, a
// cancel). Errors name the output file.
#pragma once

#include <alignscope/align/alignment_sink.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/seq/sequence.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace alignscope {

class AlignmentFileStream final : public AlignmentSink {
public:
    // Opens the temporary output (and the pair format's spool) now, so that a
    // path that cannot be written fails before any work. `path` must be a
    // file ("-", standard output, cannot be replaced atomically: Error). The
    // alignment's ids are query.id and target.id; its residues are read from
    // query.residues and target.residues, which must outlive the writer.
    AlignmentFileStream(const std::string& path, OutputFormat format, WriterContext context, const Sequence& query,
                        const Sequence& target);
    ~AlignmentFileStream() override;
    AlignmentFileStream(const AlignmentFileStream&) = delete;
    AlignmentFileStream& operator=(const AlignmentFileStream&) = delete;

    void begin(const Alignment& header) override;
    void columns(std::span<const CigarOp> runs) override;
    void end(const Alignment& alignment) override;

    // After end(): writes the rest, flushes and renames the file into place.
    // extra_json: a JSON object whose fields join a json record (as the CLI
    // adds "long_pair"); other formats ignore it. Throws Error naming the file.
    void commit(std::string_view extra_json = {});

    const std::string& path() const;
    // Columns received so far.
    std::int64_t columns_written() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace alignscope
