// Checkpoints of a long-pair job's stage 1 (see long_pair.hpp), so that a
// killed job resumes where it stopped, on any device and with any strategy or
// stream count: what stage 1 keeps is at absolute row positions.
//
// A checkpoint directory holds
//   long-pair.manifest        what the checkpoint is: the pair (lengths and
//                             CRC-32 of both encoded sequences), the scoring
//                             scheme and mode, the rows saved with the CRC-32
//                             of each row file, the running best cells up to
//                             the last saved row, and the stage-1 overview
//                             grid up to that row when there is one;
//   long-pair-row-<row>.bin   H and F of one saved row, columns 0..n.
// Every file is "ALSCKPT1" + u32 format version + u32 kind + u64 payload
// size, the payload, and a CRC-32 of everything before it (native
// little-endian integers). Files are written to a temporary name, fsync'ed
// and renamed over the old one, and the manifest is written last, so a crash
// at any point leaves the previous checkpoint whole. Reading checks sizes
// (against the file's size before reading it), checksums, the pair's identity
// and that the contents are ones a job writes (cells inside the checkpoint,
// scores in the kernels' range, rows that keep the DP's invariants: column 0
// on stage 1's left edge, H >= F, H(j) >= H(j-1) - open, the recorded best
// cells at least every H they cover), and throws one Error naming the file
// and what does not match. Values that pass and are still not this job's
// (CRC-32 only finds damage) surface when align_long's stages 2 and 3 find
// that they do not fit together: one Error naming the checkpoint.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::longpair {

inline constexpr std::uint32_t kCheckpointVersion = 1;
inline constexpr const char* kCheckpointManifest = "long-pair.manifest";

// What a checkpoint must match to be resumed.
struct CheckpointIdentity {
    std::int64_t m = 0, n = 0;                    // residues of the query and the target
    std::uint32_t query_crc = 0, target_crc = 0;  // CRC-32 of the encoded residues
    std::string matrix;                           // the matrix's name
    std::uint32_t matrix_crc = 0;                 // CRC-32 of its letters and (scaled) scores
    int gap_open = 0, gap_extend = 0, scale = 1;  // scaled, as in ScoringScheme
    AlignmentMode mode = AlignmentMode::Global;
    FreeEndGaps free_ends = FreeEndGaps::none();  // semi-global only (none otherwise)

    static CheckpointIdentity of(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                                 const ScoringScheme& scheme, const AlignOptions& options);
};

// Stage 1 up to the last saved row (forward, 1-based coordinates).
struct CheckpointState {
    std::vector<std::int64_t> rows;       // saved rows, ascending; the last one is where stage 1 goes on
    std::vector<std::uint32_t> row_crcs;  // CRC-32 of each row file
    BestCell best;                        // local: the best cell of rows 1..last_row()
    BestCell last_column;  // semi-global with a free target end: best H of column n in rows 1..last_row()
    // The stage-1 overview of rows 1..last_row() (blocks that start at or above it).
    int overview_cols = 0;
    std::vector<std::int64_t> overview_row_edges;
    std::vector<Score> overview;

    std::int64_t last_row() const { return rows.empty() ? 0 : rows.back(); }
};

class LongCheckpoint {
public:
    // A new job's checkpoint in `dir`: creates the directory when missing,
    // checks that files can be written there, and refuses a directory that
    // already holds a checkpoint (resume it, or choose another directory).
    static LongCheckpoint start(const std::string& dir, const CheckpointIdentity& id);
    // The checkpoint in `dir` for --resume: the manifest and every row file it
    // lists are read and checked against `id`.
    static LongCheckpoint resume(const std::string& dir, const CheckpointIdentity& id);

    const CheckpointState& state() const { return state_; }
    const std::string& directory() const { return dir_; }
    std::string manifest_path() const;
    std::string row_path(std::int64_t row) const;

    // H and F of saved row k (an index into state().rows), checked again.
    void read_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) const;
    // Writes a row file (durably) and adds the row to the state; it becomes
    // part of the checkpoint with the next commit(). Rows come in ascending
    // order, below every row already saved.
    void add_row(std::int64_t row, const std::vector<Score>& h, const std::vector<Score>& f);
    // Writes the manifest with every row added so far and these running values.
    void commit(const BestCell& best, const BestCell& last_column, int overview_cols,
                const std::vector<std::int64_t>& overview_row_edges, const std::vector<Score>& overview);
    // After a successful job: removes the manifest, the row files (those it
    // lists, those this process wrote, and any other long-pair-row-*.bin a
    // crash left), temporary files a crash left, and the directory when the
    // job created it and it is empty. Nothing else is touched.
    void remove_files();
    // The same removal for a checkpoint a finished job kept
    // (LongPairOptions::keep_checkpoint) until its output was safely written:
    // the manifest, every long-pair-row-*.bin and the temporary files of an
    // interrupted write in `dir`, and `dir` itself when `remove_dir` and it is
    // then empty. Nothing else is touched; errors are ignored.
    static void remove_files_in(const std::string& dir, bool remove_dir);
    // After a failed job: the directory goes only when the job created it and
    // nothing is in it (no checkpoint was written).
    void remove_empty_directory();

    // An exclusive lock on the directory (flock) for the job's lifetime: two
    // jobs never write one checkpoint.
    class DirLock {
    public:
        DirLock() = default;
        explicit DirLock(const std::string& dir);  // throws Error when another job holds it
        DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
        DirLock& operator=(DirLock&& o) noexcept;
        DirLock(const DirLock&) = delete;
        DirLock& operator=(const DirLock&) = delete;
        ~DirLock();

    private:
        int fd_ = -1;
    };

private:
    LongCheckpoint(std::string dir, CheckpointIdentity id) : dir_(std::move(dir)), id_(std::move(id)) {}
    DirLock lock_;
    std::string dir_;
    CheckpointIdentity id_;
    CheckpointState state_;
    bool created_dir_ = false;          // by this job (or the one it resumes): removed when empty at the end
    std::vector<std::string> written_;  // row files this process wrote
};

}  // namespace alignscope::longpair
