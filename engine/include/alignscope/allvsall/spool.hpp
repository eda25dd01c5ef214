// The results of an all-against-all job on disk, in tile order: tiles arrive in
// any order, wait until every earlier tile is in, and are appended to a spool
// file, so the triangle of 10^8 pairs never sits in memory. With a checkpoint
// directory the spool is the checkpoint: a manifest naming the inputs, the
// scoring scheme, the tiling and the trace criteria records how many tiles
// (and bytes, with their CRC-32) are in; it is written to a temporary name,
// fsync'ed and renamed, so a killed job leaves the previous one whole, and a
// resumed job checks it, cuts the spool back to it and goes on from there.
#pragma once

#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/tile_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace alignscope::allvsall {

inline constexpr const char* kManifestName = "allvsall.manifest";
inline constexpr const char* kSpoolName = "allvsall.spool";

struct SpoolOptions {
    std::string checkpoint_dir;    // empty: a temporary spool, unlinked as soon as it is made
    bool resume = false;           // go on from the checkpoint in checkpoint_dir
    double checkpoint_every = 60;  // seconds between manifests; 0 = after every tile
    std::string temp_dir;          // where a temporary spool goes; empty = the system's
};

// The lines of the manifest that a resumed job must match (inputs, scheme,
// mode, tiling, trace criteria), "key value" each.
std::vector<std::string> checkpoint_identity(const Problem& problem);

class ResultSpool : public TileSink {
public:
    // A new spool, or (options.resume) the checkpoint's, checked against
    // `problem` (which must have its self-scores for --top). Throws Error
    // naming the directory and what does not match.
    ResultSpool(const Problem& problem, const SpoolOptions& options);
    ~ResultSpool() override;
    ResultSpool(const ResultSpool&) = delete;
    ResultSpool& operator=(const ResultSpool&) = delete;

    std::uint64_t first_tile() const { return resumed_tiles_; }  // tiles already in at the start
    std::uint64_t tiles_done() const { return tiles_; }          // in the spool, in order
    std::uint64_t pairs_done() const { return pairs_; }
    std::uint64_t cells_done() const { return cells_; }
    std::uint64_t traced_done() const { return traced_; }    // pairs traced per tile
    std::size_t waiting() const { return pending_.size(); }  // arrived out of order
    bool complete() const { return tiles_ == problem_.tiling.tile_count(); }

    void put(TileResult&& result) override;
    // Writes the manifest now (with a checkpoint directory; nothing otherwise).
    void checkpoint();

    // After every tile: the pairs (with their scores) among every record's
    // `top` best partners (score descending, partner ascending) that were not
    // traced per tile, in (row, column) order.
    std::vector<PairScore> untraced_top_pairs() const;
    // Every record, in tile order (the spool is read back; bounded memory).
    void for_each(const std::function<void(const TileResult&)>& visit) const;
    // After the outputs are written: removes the checkpoint's files (and its
    // directory when this job or the one it resumed created it and it is empty).
    void remove_checkpoint();

    const std::string& spool_path() const { return spool_path_; }

private:
    struct Partner {
        std::int64_t score;
        std::uint32_t partner;
        bool traced;
        PairIndex pair;
    };
    void append(const TileResult& r);
    void note_top(const TileResult& r);
    void write_manifest();
    void read_back(std::uint64_t bytes, const std::function<void(const TileResult&)>& visit) const;

    const Problem& problem_;
    SpoolOptions options_;
    longpair::LongCheckpoint::DirLock lock_;
    std::string spool_path_, manifest_path_;  // a temporary spool is unlinked when made (its name is for messages)
    bool created_dir_ = false, temporary_ = false;
    int fd_ = -1;
    std::uint64_t tiles_ = 0, resumed_tiles_ = 0, pairs_ = 0, cells_ = 0, traced_ = 0, bytes_ = 0;
    std::uint32_t crc_ = 0;
    std::map<std::uint64_t, TileResult> pending_;
    std::chrono::steady_clock::time_point last_checkpoint_;
    bool dirty_ = false;
    // --top: per record (rows, then columns in the rectangle), a min-heap of its best partners.
    std::vector<std::vector<Partner>> top_;
    std::string buffer_;
};

}  // namespace alignscope::allvsall
