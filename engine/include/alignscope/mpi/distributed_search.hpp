// Database search over Open MPI: rank 0 reads the queries and the database and
// sends every rank its slice; each rank searches its slice on its own device
// (bit scores and E-values with the whole database's size) and streams each
// query's K best hits back; rank 0 merges them in the order one process uses
// (score descending, earlier FASTA record first). Built only with MPI.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/mpi/tile_dealer.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/search/database.hpp>
#include <alignscope/search/search.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::mpi {

// What every rank searches with: rank 0's queries and settings.
struct SearchJob {
    std::vector<Sequence> queries;  // ids and residues
    ScoringScheme scheme;
    AlignOptions options;
    // top, filters, traceback; query_batch set (the same batches on every
    // rank as in one process) and statistics_residues set to the whole database's.
    SearchOptions search;
    std::uint64_t database_sequences = 0;  // of the whole database
    AlphabetKind alphabet = AlphabetKind::Protein;
};

// Rank `rank`'s share of `whole`: the positions p with p mod ranks == rank.
// The database is in length order, so every rank gets about the same number of
// sequences, residues and cells; file_index keeps pointing into the FASTA.
PreparedDatabase database_slice(const PreparedDatabase& whole, int rank, int ranks);

// One query's hits from every rank (each best first, as run_search gives
// them) as one process would report them: ordered by score, then FASTA
// record, cut to `top`, ranked 1.., and `position` set to the place in the
// whole database (`position_of[file_index]`).
QueryHits merge_query_hits(const std::vector<QueryHits>& parts, std::size_t top,
                           const std::vector<std::size_t>& position_of);

// A comma list of kernel names holding every name of `lists` once, each list's
// order kept (the scan kernels one process would name for a query batch).
std::string merge_kernel_lists(const std::vector<std::string>& lists);

// Hits as bytes: everything but the ids and the gapped rows, which rank 0
// takes from its own copy of the queries and the database and rebuilds from
// the CIGAR (complete_alignment). `kernels`: the scan kernels of the query's
// batch on this rank (written only when the search has no traceback).
void encode_query_hits(const QueryHits& hits, const std::string& kernels, bool traceback, std::string& out);
QueryHits decode_query_hits(const std::string& bytes, std::size_t& offset, bool traceback, std::string& kernels,
                            const std::string& what);

// Rank 0: sends the job and every other rank's slice (after the broadcast a
// rank has all it needs). `send_search_failure` instead tells every rank that
// rank 0 could not start (it alone reports why).
void send_search_job(const World& world, const SearchJob& job, const PreparedDatabase& whole);
void send_search_failure(const World& world);
// Ranks 1..N-1: the job and this rank's slice; nullopt when rank 0 failed.
struct RankSearch {
    SearchJob job;
    PreparedDatabase slice;
};
std::optional<RankSearch> receive_search_job(const World& world);

// Ranks 1..N-1: each query's hits to rank 0, a batch of queries at a time.
class RemoteHits {
public:
    RemoteHits(const World& world, bool traceback) : world_(world), traceback_(traceback) {}
    void add(const QueryHits& hits, const std::string& kernels);
    void flush();                               // sends what is held
    void finish(const SearchSummary& summary);  // flushes and says this rank is done
    // Sends the error to rank 0, which names this rank and host and ends the run.
    void report_error(const std::string& message);

private:
    const World& world_;
    bool traceback_;
    std::string buffer_;
};

// Rank 0's own slice, searched on a thread of its own: its hits and its end,
// handed to the thread that talks MPI.
class LocalHits {
public:
    void add(const QueryHits& hits, const std::string& kernels);
    void finish(const SearchSummary& summary);
    void fail(std::exception_ptr error);

    // For collect_search_hits: what has come since the last call.
    struct Taken {
        std::vector<QueryHits> hits;
        std::vector<std::string> kernels;
        std::optional<SearchSummary> summary;
        std::exception_ptr error;
    };
    Taken take();

private:
    std::mutex mutex_;
    Taken pending_;
};

// Rank 0: merges every rank's hits (its own from `local`) and hands each query
// to `merged`, in query order, as soon as every rank has sent it: ids set,
// gapped rows rebuilt and checked against the score, kernel names of a
// score-only search merged. Returns the summary of the whole run (cells and
// rescored pairs summed, times of the slowest rank, devices listed). A rank's
// error ends this with Error "rank R on HOST: message"; a cancelled token with
// Cancelled.
SearchSummary collect_search_hits(const World& world, const SearchJob& job, const PreparedDatabase& whole,
                                  LocalHits& local, const std::function<void(const QueryHits&)>& merged,
                                  const CancellationToken* cancel);

}  // namespace alignscope::mpi
