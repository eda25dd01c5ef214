// Database search over Open MPI (see distributed_search.hpp): the job and the
// slices as bytes, the hits streamed back, and rank 0's merge.
#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/mpi/distributed_search.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <numeric>
#include <thread>

namespace alignscope::mpi {
namespace {

// Tags of their own: a run deals tiles or searches, never both.
enum Tag : int { kSlice = 21, kHits = 22, kDone = 23, kError = 24 };
// A rank sends its hits when this many bytes are held, else after each batch.
constexpr std::size_t kFlushBytes = std::size_t(4) << 20;

void check(int status, const char* what) {
    if (status != MPI_SUCCESS) throw Error(std::string("MPI: ") + what + " failed");
}

template <typename T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_text(std::string& out, const std::string& s) {
    put<std::uint64_t>(out, s.size());
    out += s;
}

// Reads what put/put_text wrote; `what` names the message in errors.
struct Reader {
    const std::string& data;
    std::size_t& at;
    const std::string& what;
    template <typename T>
    T get() {
        if (data.size() - at < sizeof(T)) throw Error("MPI: " + what + " is cut short");
        T v;
        std::memcpy(&v, data.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string text() {
        const auto n = get<std::uint64_t>();
        if (data.size() - at < n) throw Error("MPI: " + what + " is cut short");
        std::string s = data.substr(at, static_cast<std::size_t>(n));
        at += static_cast<std::size_t>(n);
        return s;
    }
};

void put_optional(std::string& out, const std::optional<double>& v) {
    put<std::uint8_t>(out, v ? 1 : 0);
    if (v) put<double>(out, *v);
}
std::optional<double> get_optional(Reader& r) {
    if (!r.get<std::uint8_t>()) return std::nullopt;
    return r.get<double>();
}

// The matrix (already scaled) in the NCBI layout that SubstitutionMatrix::parse
// reads, every entry divided by `divisor`.
std::string matrix_text(const SubstitutionMatrix& m, int divisor) {
    std::string text = " ";
    for (char c : m.letters()) (text += ' ') += c;
    text += '\n';
    for (int i = 0; i < m.size(); ++i) {
        text += m.letters()[static_cast<std::size_t>(i)];
        for (int j = 0; j < m.size(); ++j) (text += ' ') += std::to_string(m.score(i, j) / divisor);
        text += '\n';
    }
    return text;
}

// The matrix for the other ranks. parse takes entries up to 100,000, the
// limit of a matrix file, but the scheme's matrix may hold more: a file's
// entries doubled for half-step penalties, or a --match of up to 1,000,000.
// So a match/mismatch matrix goes as its two scores, and any other as its text
// divided by the greatest common divisor of its entries (a multiple of the
// scale, so within parse's limit), scaled back on arrival.
enum MatrixForm : std::uint8_t { kMatrixText = 0, kMatchMismatch = 1 };

void put_matrix(std::string& out, const SubstitutionMatrix& m) {
    put_text(out, m.name());
    const SubstitutionMatrix two = SubstitutionMatrix::match_mismatch(m.max_score(), m.min_score());
    if (m.is_nucleotide() && two.letters() == m.letters() && two.scores() == m.scores()) {
        put<std::uint8_t>(out, kMatchMismatch);
        put<std::int32_t>(out, m.max_score());
        put<std::int32_t>(out, m.min_score());
        return;
    }
    int divisor = 0;
    for (int v : m.scores()) divisor = std::gcd(divisor, v);
    divisor = std::max(divisor, 1);
    put<std::uint8_t>(out, kMatrixText);
    put<std::int32_t>(out, divisor);
    put_text(out, matrix_text(m, divisor));
}

SubstitutionMatrix get_matrix(Reader& r) {
    const std::string name = r.text();
    const auto form = r.get<std::uint8_t>();
    if (form == kMatchMismatch) {
        const auto match = r.get<std::int32_t>();
        const auto mismatch = r.get<std::int32_t>();
        return SubstitutionMatrix::match_mismatch(match, mismatch);
    }
    if (form != kMatrixText) throw Error("MPI: " + r.what + " holds no matrix");
    const auto divisor = r.get<std::int32_t>();
    if (divisor < 1) throw Error("MPI: " + r.what + " holds a damaged matrix");
    const SubstitutionMatrix m = SubstitutionMatrix::parse(r.text(), name, "the matrix from rank 0");
    return divisor == 1 ? m : m.scaled(divisor);
}

void put_summary(std::string& out, const SearchSummary& s) {
    for (double v : {s.load_seconds, s.scan_seconds, s.scan_kernel_seconds, s.select_seconds, s.traceback_seconds,
                     s.total_seconds})
        put<double>(out, v);
    put<std::uint64_t>(out, s.cells);
    put<std::uint64_t>(out, s.recomputed);
    put<std::uint64_t>(out, s.hits);
    put_text(out, s.scan_device);
    put_text(out, s.scan_kernels);
    put_text(out, s.traceback_device);
}
SearchSummary get_summary(Reader& r) {
    SearchSummary s;
    for (double* v : {&s.load_seconds, &s.scan_seconds, &s.scan_kernel_seconds, &s.select_seconds, &s.traceback_seconds,
                      &s.total_seconds})
        *v = r.get<double>();
    s.cells = r.get<std::uint64_t>();
    s.recomputed = r.get<std::uint64_t>();
    s.hits = r.get<std::uint64_t>();
    s.scan_device = r.text();
    s.scan_kernels = r.text();
    s.traceback_device = r.text();
    return s;
}

std::string receive_bytes(const MPI_Status& probed) {
    int count = 0;
    MPI_Get_count(&probed, MPI_CHAR, &count);
    std::string bytes(static_cast<std::size_t>(count), '\0');
    check(MPI_Recv(bytes.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "receiving a message");
    return bytes;
}

void send_bytes(const std::string& bytes, int to, int tag, const char* what) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw Error(std::string("MPI: ") + what + " is over 2 GB");
    check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD), what);
}

std::string encode_slice(const PreparedDatabase& d) {
    std::string out;
    put_text(out, d.source);
    put<std::int32_t>(out, static_cast<std::int32_t>(d.alphabet));
    put_text(out, d.residues);
    put<std::uint64_t>(out, d.size());
    for (std::size_t p = 0; p < d.size(); ++p) {
        put<std::uint64_t>(out, d.offsets[p + 1]);
        put<std::uint32_t>(out, d.file_index[p]);
        put_text(out, d.ids[p]);
        put_text(out, d.descriptions[p]);
    }
    return out;
}
PreparedDatabase decode_slice(const std::string& bytes) {
    std::size_t at = 0;
    const std::string what = "the database slice from rank 0";
    Reader r{bytes, at, what};
    PreparedDatabase d;
    d.source = r.text();
    d.alphabet = static_cast<AlphabetKind>(r.get<std::int32_t>());
    d.residues = r.text();
    const auto n = r.get<std::uint64_t>();
    d.offsets.assign(1, 0);
    for (std::uint64_t p = 0; p < n; ++p) {
        d.offsets.push_back(r.get<std::uint64_t>());
        d.file_index.push_back(r.get<std::uint32_t>());
        d.ids.push_back(r.text());
        d.descriptions.push_back(r.text());
    }
    if (d.offsets.back() != d.residues.size()) throw Error("MPI: " + what + " is inconsistent");
    return d;
}

}  // namespace

PreparedDatabase database_slice(const PreparedDatabase& whole, int rank, int ranks) {
    if (ranks < 1 || rank < 0 || rank >= ranks) throw Error("database_slice: rank out of range");
    std::vector<std::size_t> positions;
    positions.reserve(whole.size() / static_cast<std::size_t>(ranks) + 1);
    for (std::size_t p = static_cast<std::size_t>(rank); p < whole.size(); p += static_cast<std::size_t>(ranks))
        positions.push_back(p);
    return whole.subset(positions);
}

QueryHits merge_query_hits(const std::vector<QueryHits>& parts, std::size_t top,
                           const std::vector<std::size_t>& position_of) {
    QueryHits merged;
    if (!parts.empty()) merged.query_index = parts.front().query_index;
    for (const QueryHits& part : parts) {
        if (part.query_index != merged.query_index) throw Error("merge_query_hits: hits of different queries");
        merged.hits.insert(merged.hits.end(), part.hits.begin(), part.hits.end());
    }
    // One process's order (top_positions): score descending, then the earlier
    // FASTA record. Record indices are unique, so the order is total.
    std::sort(merged.hits.begin(), merged.hits.end(), [](const SearchHit& a, const SearchHit& b) {
        return a.score != b.score ? a.score > b.score : a.file_index < b.file_index;
    });
    if (merged.hits.size() > top) merged.hits.resize(top);
    int rank = 0;
    for (SearchHit& hit : merged.hits) {
        if (hit.file_index >= position_of.size())
            throw Error("merge_query_hits: FASTA record " + std::to_string(hit.file_index) + " is not in the database");
        hit.position = position_of[hit.file_index];
        hit.rank = ++rank;
    }
    return merged;
}

std::string merge_kernel_lists(const std::vector<std::string>& lists) {
    std::vector<std::string> merged;
    for (const std::string& list : lists) {
        // A name not seen yet goes right after the name before it in its own
        // list (or first, when it opens the list).
        std::size_t insert_at = 0;
        for (std::size_t a = 0, b; a < list.size(); a = b + 1) {
            b = list.find(',', a);
            if (b == std::string::npos) b = list.size();
            if (b == a) continue;
            const std::string name = list.substr(a, b - a);
            const auto found = std::find(merged.begin(), merged.end(), name);
            if (found != merged.end()) {
                insert_at = static_cast<std::size_t>(found - merged.begin()) + 1;
            } else {
                merged.insert(merged.begin() + static_cast<std::ptrdiff_t>(insert_at), name);
                ++insert_at;
            }
        }
    }
    std::string out;
    for (const std::string& name : merged) out += (out.empty() ? "" : ",") + name;
    return out;
}

void encode_query_hits(const QueryHits& hits, const std::string& kernels, bool traceback, std::string& out) {
    put<std::uint64_t>(out, hits.query_index);
    if (!traceback) put_text(out, kernels);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(hits.hits.size()));
    for (const SearchHit& hit : hits.hits) {
        put<std::uint32_t>(out, hit.file_index);
        put<std::int64_t>(out, hit.score);
        put_optional(out, hit.bits);
        put_optional(out, hit.evalue);
        const Alignment& a = hit.alignment;
        put<std::uint8_t>(out, static_cast<std::uint8_t>(a.mode));
        for (std::int64_t v :
             {a.score, a.query_begin, a.query_end, a.target_begin, a.target_end, a.query_length, a.target_length})
            put<std::int64_t>(out, v);
        put<std::uint32_t>(out, static_cast<std::uint32_t>(a.cigar.ops().size()));
        for (const CigarOp& op : a.cigar.ops()) {
            put<char>(out, op.op);
            put<std::uint32_t>(out, op.length);
        }
        put_text(out, a.device);
        put_text(out, a.kernel);
    }
}

QueryHits decode_query_hits(const std::string& bytes, std::size_t& offset, bool traceback, std::string& kernels,
                            const std::string& what) {
    Reader r{bytes, offset, what};
    QueryHits hits;
    hits.query_index = static_cast<std::size_t>(r.get<std::uint64_t>());
    kernels = traceback ? std::string() : r.text();
    hits.hits.resize(r.get<std::uint32_t>());
    for (SearchHit& hit : hits.hits) {
        hit.file_index = r.get<std::uint32_t>();
        hit.score = r.get<std::int64_t>();
        hit.bits = get_optional(r);
        hit.evalue = get_optional(r);
        Alignment& a = hit.alignment;
        const auto mode = r.get<std::uint8_t>();
        if (mode > static_cast<std::uint8_t>(AlignmentMode::SemiGlobal)) throw Error("MPI: " + what + " is damaged");
        a.mode = static_cast<AlignmentMode>(mode);
        for (std::int64_t* v : {&a.score, &a.query_begin, &a.query_end, &a.target_begin, &a.target_end, &a.query_length,
                                &a.target_length})
            *v = r.get<std::int64_t>();
        const auto ops = r.get<std::uint32_t>();
        a.cigar.reserve(ops);
        for (std::uint32_t k = 0; k < ops; ++k) {
            const char op = r.get<char>();
            a.cigar.push(op, r.get<std::uint32_t>());
        }
        a.device = r.text();
        a.kernel = r.text();
    }
    return hits;
}

void send_search_job(const World& world, const SearchJob& job, const PreparedDatabase& whole) {
    std::string bytes(1, '\1');
    put<std::int32_t>(bytes, static_cast<std::int32_t>(job.alphabet));
    put_matrix(bytes, job.scheme.matrix);
    put<std::int32_t>(bytes, job.scheme.gap_open);
    put<std::int32_t>(bytes, job.scheme.gap_extend);
    put<std::int32_t>(bytes, job.scheme.scale);
    put<std::uint8_t>(bytes, static_cast<std::uint8_t>(job.options.mode));
    const FreeEndGaps& f = job.options.free_ends;
    put<std::uint8_t>(bytes, static_cast<std::uint8_t>(f.query_begin | f.query_end << 1 | f.target_begin << 2 |
                                                       f.target_end << 3 | job.options.traceback << 4 |
                                                       job.options.begins << 5));
    put<std::uint64_t>(bytes, job.search.top);
    put_optional(bytes, job.search.min_score);
    put_optional(bytes, job.search.max_evalue);
    put<std::uint8_t>(bytes, job.search.traceback ? 1 : 0);
    put<std::uint64_t>(bytes, job.search.query_batch);
    put<std::uint64_t>(bytes, job.search.statistics_residues.value_or(whole.residue_count()));
    put<std::uint64_t>(bytes, job.database_sequences);
    put<std::uint64_t>(bytes, job.queries.size());
    for (const Sequence& q : job.queries) {
        put_text(bytes, q.id);
        put_text(bytes, q.residues);
    }
    world.broadcast(bytes);
    for (int r = 1; r < world.size(); ++r)
        send_bytes(encode_slice(database_slice(whole, r, world.size())), r, kSlice, "sending a database slice");
}

void send_search_failure(const World& world) {
    std::string bytes(1, '\0');
    world.broadcast(bytes);
}

std::optional<RankSearch> receive_search_job(const World& world) {
    std::string bytes;
    world.broadcast(bytes);
    if (bytes.empty() || bytes[0] == '\0') return std::nullopt;
    // The slice first: should the job not decode here, rank 0 is not left
    // waiting to send it, and hears this rank's error.
    MPI_Status status;
    check(MPI_Probe(0, kSlice, MPI_COMM_WORLD, &status), "waiting for the database slice");
    const std::string slice = receive_bytes(status);
    std::size_t at = 1;
    const std::string what = "the job broadcast by rank 0";
    Reader r{bytes, at, what};
    RankSearch rank;
    SearchJob& job = rank.job;
    job.alphabet = static_cast<AlphabetKind>(r.get<std::int32_t>());
    job.scheme.matrix = get_matrix(r);
    job.scheme.gap_open = r.get<std::int32_t>();
    job.scheme.gap_extend = r.get<std::int32_t>();
    job.scheme.scale = r.get<std::int32_t>();
    job.options.mode = static_cast<AlignmentMode>(r.get<std::uint8_t>());
    const auto bits = r.get<std::uint8_t>();
    job.options.free_ends = {(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0};
    job.options.traceback = (bits & 16) != 0;
    job.options.begins = (bits & 32) != 0;
    job.search.top = static_cast<std::size_t>(r.get<std::uint64_t>());
    job.search.min_score = get_optional(r);
    job.search.max_evalue = get_optional(r);
    job.search.traceback = r.get<std::uint8_t>() != 0;
    job.search.query_batch = static_cast<std::size_t>(r.get<std::uint64_t>());
    job.search.statistics_residues = r.get<std::uint64_t>();
    job.database_sequences = r.get<std::uint64_t>();
    job.queries.resize(static_cast<std::size_t>(r.get<std::uint64_t>()));
    for (Sequence& q : job.queries) {
        q.id = r.text();
        q.residues = r.text();
    }
    rank.slice = decode_slice(slice);
    return rank;
}

void RemoteHits::add(const QueryHits& hits, const std::string& kernels) {
    encode_query_hits(hits, kernels, traceback_, buffer_);
    if (buffer_.size() >= kFlushBytes) flush();
}

void RemoteHits::flush() {
    if (buffer_.empty()) return;
    send_bytes(buffer_, 0, kHits, "sending hits");
    buffer_.clear();
}

void RemoteHits::finish(const SearchSummary& summary) {
    flush();
    std::string bytes;
    put_summary(bytes, summary);
    send_bytes(bytes, 0, kDone, "sending the rank's summary");
}

void RemoteHits::report_error(const std::string& message) {
    MPI_Send(message.data(), static_cast<int>(std::min<std::size_t>(message.size(), 65536)), MPI_CHAR, 0, kError,
             MPI_COMM_WORLD);
}

void LocalHits::add(const QueryHits& hits, const std::string& kernels) {
    std::lock_guard lock(mutex_);
    pending_.hits.push_back(hits);
    pending_.kernels.push_back(kernels);
}

void LocalHits::finish(const SearchSummary& summary) {
    std::lock_guard lock(mutex_);
    pending_.summary = summary;
}

void LocalHits::fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    pending_.error = std::move(error);
}

LocalHits::Taken LocalHits::take() {
    std::lock_guard lock(mutex_);
    Taken out = std::move(pending_);
    pending_ = {};
    return out;
}

namespace {

// What rank 0 holds of one rank's hits until every rank has sent a query.
struct RankQueue {
    std::vector<QueryHits> hits;  // in query order; `front` is the next unmerged one
    std::vector<std::string> kernels;
    std::size_t front = 0;
    std::size_t received = 0;  // queries sent so far
    std::optional<SearchSummary> summary;
};

// Rank 0's merge: its own hits and the other ranks' messages go into one
// queue per rank; each query all ranks have sent is merged, completed and
// handed out in query order; the ranks' summaries make the whole run's.
class HitCollector {
public:
    HitCollector(const World& world, const SearchJob& job, const PreparedDatabase& whole, LocalHits& local,
                 const std::function<void(const QueryHits&)>& merged)
        : world_(world),
          job_(job),
          whole_(whole),
          local_(local),
          merged_(merged),
          ranks_(static_cast<std::size_t>(world.size())),
          from_(ranks_),
          parts_(ranks_),
          kernel_lists_(ranks_) {
        position_of_.resize(whole.size());
        for (std::size_t p = 0; p < whole.size(); ++p) position_of_[whole.file_index[p]] = p;
    }

    SearchSummary run(const CancellationToken* cancel);

private:
    bool all_done() const {
        for (const RankQueue& q : from_)
            if (!q.summary) return false;
        return true;
    }
    void push(std::size_t rank, QueryHits&& hits, std::string&& kernels);
    bool take_local();
    bool receive_remote();
    bool query_ready() const;
    void merge_next();
    void complete(QueryHits& result, const Sequence& query, const std::string& kernels) const;
    SearchSummary whole_run();

    const World& world_;
    const SearchJob& job_;
    const PreparedDatabase& whole_;
    LocalHits& local_;
    const std::function<void(const QueryHits&)>& merged_;
    const std::size_t ranks_;
    std::vector<std::size_t> position_of_;
    std::vector<RankQueue> from_;
    std::vector<QueryHits> parts_;
    std::vector<std::string> kernel_lists_;
    std::size_t next_ = 0;
    SearchSummary summary_;
};

SearchSummary HitCollector::run(const CancellationToken* cancel) {
    const std::size_t queries = job_.queries.size();
    while (next_ < queries || !all_done()) {
        if (cancel) cancel->throw_if_cancelled();
        bool busy = take_local();
        if (receive_remote()) busy = true;
        // Every query that all ranks have sent, in order.
        while (next_ < queries && query_ready()) merge_next();
        if (!busy) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return whole_run();
}

void HitCollector::push(std::size_t rank, QueryHits&& hits, std::string&& kernels) {
    RankQueue& q = from_[rank];
    const std::size_t expected = q.received++;
    if (hits.query_index != expected)
        throw Error("MPI: rank " + std::to_string(rank) + " sent the hits of query " +
                    std::to_string(hits.query_index + 1) + " where query " + std::to_string(expected + 1) + " was due");
    q.hits.push_back(std::move(hits));
    q.kernels.push_back(std::move(kernels));
}

// Rank 0's own hits (its search runs on a thread beside this loop).
bool HitCollector::take_local() {
    bool busy = false;
    LocalHits::Taken taken = local_.take();
    if (taken.error) {
        try {
            std::rethrow_exception(taken.error);
        } catch (const Cancelled&) {
            throw;
        } catch (const std::exception& e) {
            throw Error("rank 0 on " + world_.host(0) + ": " + e.what());
        }
    }
    for (std::size_t k = 0; k < taken.hits.size(); ++k) {
        push(0, std::move(taken.hits[k]), std::move(taken.kernels[k]));
        busy = true;
    }
    if (taken.summary) from_[0].summary = std::move(taken.summary);
    return busy;
}

// One message from another rank, if one is waiting: hits, its summary, or its error.
bool HitCollector::receive_remote() {
    int flag = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
    if (!flag) return false;
    const auto rank = static_cast<std::size_t>(status.MPI_SOURCE);
    const std::string what = "a message from rank " + std::to_string(rank);
    const std::string bytes = receive_bytes(status);
    std::size_t at = 0;
    if (status.MPI_TAG == kHits) {
        while (at < bytes.size()) {
            std::string kernels;
            QueryHits hits = decode_query_hits(bytes, at, job_.search.traceback, kernels, what);
            push(rank, std::move(hits), std::move(kernels));
        }
    } else if (status.MPI_TAG == kDone) {
        Reader r{bytes, at, what};
        from_[rank].summary = get_summary(r);
    } else if (status.MPI_TAG == kError) {
        throw Error("rank " + std::to_string(rank) + " on " + world_.host(static_cast<int>(rank)) + ": " + bytes);
    } else {
        throw Error("MPI: unexpected message " + std::to_string(status.MPI_TAG) + " from rank " + std::to_string(rank));
    }
    return true;
}

// Whether every rank has sent query next_; a rank that ended without it is an error.
bool HitCollector::query_ready() const {
    bool ready = true;
    for (std::size_t r = 0; r < ranks_; ++r) {
        const RankQueue& q = from_[r];
        if (q.front < q.hits.size()) continue;
        ready = false;
        if (q.summary)
            throw Error("MPI: rank " + std::to_string(r) + " ended without the hits of query " +
                        std::to_string(next_ + 1));
    }
    return ready;
}

void HitCollector::merge_next() {
    for (std::size_t r = 0; r < ranks_; ++r) {
        RankQueue& q = from_[r];
        parts_[r] = std::move(q.hits[q.front]);
        kernel_lists_[r] = std::move(q.kernels[q.front]);
        ++q.front;
        if (q.front == q.hits.size()) {
            q.hits.clear();
            q.kernels.clear();
            q.front = 0;
        }
    }
    QueryHits result = merge_query_hits(parts_, job_.search.top, position_of_);
    const std::string kernels = job_.search.traceback ? std::string() : merge_kernel_lists(kernel_lists_);
    complete(result, job_.queries[next_], kernels);
    summary_.hits += result.hits.size();
    merged_(result);
    ++next_;
}

// Names the merged hits and rebuilds the aligned rows of each traceback from
// its CIGAR, which must score what the rank said.
void HitCollector::complete(QueryHits& result, const Sequence& query, const std::string& kernels) const {
    for (SearchHit& hit : result.hits) {
        Alignment& a = hit.alignment;
        a.query_id = query.id;
        a.target_id = whole_.ids[hit.position];
        if (!job_.search.traceback) a.kernel = kernels;
        if (a.has_traceback() && a.query_aligned.empty()) {
            const std::int64_t path =
                complete_alignment(a, query.residues, whole_.residues_of(hit.position), job_.scheme);
            if (path != a.score)
                throw Error("MPI: the alignment of query '" + query.id + "' with '" + a.target_id + "' from " +
                            a.device + " scores " + std::to_string(job_.scheme.to_user(path)) + " by its CIGAR, not " +
                            std::to_string(job_.scheme.to_user(a.score)));
        }
    }
}

// The whole run: sizes of the whole database, work summed, the slowest rank's times.
SearchSummary HitCollector::whole_run() {
    const SearchSummary& first = *from_[0].summary;
    summary_.queries = job_.queries.size();
    summary_.database_sequences = job_.database_sequences;
    summary_.database_residues = whole_.residue_count();
    summary_.statistics = first.statistics;
    summary_.statistics_note = first.statistics_note;
    std::vector<std::string> scan_devices, trace_devices, kernels;
    for (const RankQueue& q : from_) {
        const SearchSummary& s = *q.summary;
        summary_.cells += s.cells;
        summary_.recomputed += s.recomputed;
        summary_.load_seconds = std::max(summary_.load_seconds, s.load_seconds);
        summary_.scan_seconds = std::max(summary_.scan_seconds, s.scan_seconds);
        summary_.scan_kernel_seconds = std::max(summary_.scan_kernel_seconds, s.scan_kernel_seconds);
        summary_.select_seconds = std::max(summary_.select_seconds, s.select_seconds);
        summary_.traceback_seconds = std::max(summary_.traceback_seconds, s.traceback_seconds);
        scan_devices.push_back(s.scan_device);
        trace_devices.push_back(s.traceback_device);
        kernels.push_back(s.scan_kernels);
    }
    summary_.scan_device = merge_kernel_lists(scan_devices);
    summary_.traceback_device = merge_kernel_lists(trace_devices);
    summary_.scan_kernels = merge_kernel_lists(kernels);
    return summary_;
}

}  // namespace

SearchSummary collect_search_hits(const World& world, const SearchJob& job, const PreparedDatabase& whole,
                                  LocalHits& local, const std::function<void(const QueryHits&)>& merged,
                                  const CancellationToken* cancel) {
    return HitCollector(world, job, whole, local, merged).run(cancel);
}

}  // namespace alignscope::mpi
