// The streamed pair pipeline: two reader threads cut the files into blocks of
// records, a pool of threads reads (plain files) and parses them and formats
// finished chunks, an assembling thread gathers chunks of pairs, this thread
// hands them to the backend (on a GPU, several chunks at once: one chunk's
// encoding and packing overlap another's kernels and copies), and a writer
// thread writes the chunks' text in input order. Bounded queues between the
// stages keep memory flat however long the files are; a formatted chunk's
// result vector is handed to a later chunk to be aligned into.
#include <alignscope/device/pair_pipeline.hpp>

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace alignscope {

namespace {

using Clock = std::chrono::steady_clock;

// Output held back before it starts to flow (see the writer thread).
constexpr std::size_t kHeldBytes = std::size_t{16} << 20;
// A parsing thread keeps its last block's buffer up to this size (blocks are
// about a megabyte; one long record makes a longer one).
constexpr std::size_t kKeptBlockBytes = std::size_t{16} << 20;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Busy seconds of a stage, added from any thread.
class StageTime {
public:
    void add(double seconds) {
        std::lock_guard lock(mutex_);
        total_ += seconds;
    }
    double total() const {
        std::lock_guard lock(mutex_);
        return total_;
    }

private:
    mutable std::mutex mutex_;
    double total_ = 0;
};

// Times a span of one stage and puts it on the job's timeline as a host lane
// ("host" device, category "host") beside the device's streams.
class StageSpan {
public:
    StageSpan(StageTime& time, TimelineSink* sink, const char* name, int lane, std::uint64_t items = 0)
        : time_(time),
          sink_(sink),
          name_(name),
          lane_(lane),
          items_(items),
          start_(Clock::now()),
          start_ns_(sink ? steady_now_ns() : 0) {}
    ~StageSpan() {
        time_.add(seconds_since(start_));
        if (!sink_) return;
        TimelineEvent event;
        event.name = name_;
        event.category = "host";
        event.device = "host";
        event.lane = lane_;
        event.start_ns = start_ns_;
        event.end_ns = steady_now_ns();
        event.cells = items_;
        try {
            sink_->record(std::move(event));
        } catch (...) {
            // A timeline that cannot take an event must not fail the job.
        }
    }
    StageSpan(const StageSpan&) = delete;
    StageSpan& operator=(const StageSpan&) = delete;

private:
    StageTime& time_;
    TimelineSink* sink_;
    const char* name_;
    int lane_;
    std::uint64_t items_;
    Clock::time_point start_;
    std::int64_t start_ns_;
};

// Worker threads taking tasks in submission order, background tasks only
// while no other waits. Tasks never wait on the pipeline's queues, so the
// pool cannot deadlock.
class TaskPool {
public:
    explicit TaskPool(int threads) {
        for (int k = 0; k < threads; ++k) workers_.emplace_back([this, k] { work(k); });
    }
    ~TaskPool() {
        {
            std::lock_guard lock(mutex_);
            closing_ = true;
        }
        wake_.notify_all();
        for (auto& worker : workers_) worker.join();
    }
    TaskPool(const TaskPool&) = delete;
    TaskPool& operator=(const TaskPool&) = delete;

    // The task gets the index of the worker that runs it (its timeline lane).
    template <typename Task>
    auto submit(Task task, bool background = false) -> std::future<decltype(task(0))> {
        auto packaged = std::make_shared<std::packaged_task<decltype(task(0))(int)>>(std::move(task));
        auto future = packaged->get_future();
        {
            std::lock_guard lock(mutex_);
            (background ? background_ : tasks_).emplace_back([packaged](int worker) { (*packaged)(worker); });
        }
        wake_.notify_one();
        return future;
    }

private:
    void work(int worker) {
        for (;;) {
            std::function<void(int)> task;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [this] { return closing_ || !tasks_.empty() || !background_.empty(); });
                std::deque<std::function<void(int)>>& queue = tasks_.empty() ? background_ : tasks_;
                if (queue.empty()) return;
                task = std::move(queue.front());
                queue.pop_front();
            }
            task(worker);
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void(int)>> tasks_, background_;
    bool closing_ = false;
    std::vector<std::thread> workers_;
};

// A bounded queue of results to come, in the order they were pushed: a stage
// pushes the future of each piece of work as it hands it out, the next stage
// takes them in the same order, so the output keeps the input's order however
// the pool runs them.
template <typename T>
class OrderedQueue {
public:
    explicit OrderedQueue(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

    // False when the queue was aborted (the pipeline is stopping).
    bool push(std::future<T> item) {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [this] { return aborted_ || items_.size() < capacity_; });
        if (aborted_) return false;
        items_.push_back(std::move(item));
        ready_.notify_one();
        return true;
    }
    void push_failure(std::exception_ptr failure) {
        std::promise<T> promise;
        promise.set_exception(std::move(failure));
        std::lock_guard lock(mutex_);
        if (aborted_) return;
        items_.push_back(promise.get_future());  // past the capacity: the last item
        ready_.notify_one();
    }
    // The next item, or none once the queue is closed and empty or aborted.
    std::optional<std::future<T>> pop() {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return aborted_ || closed_ || !items_.empty(); });
        if (aborted_ || items_.empty()) return std::nullopt;
        std::future<T> item = std::move(items_.front());
        items_.pop_front();
        space_.notify_one();
        return item;
    }
    void close() {
        std::lock_guard lock(mutex_);
        closed_ = true;
        ready_.notify_all();
    }
    void set_capacity(std::size_t capacity) {
        std::lock_guard lock(mutex_);
        capacity_ = std::max<std::size_t>(capacity, 1);
        space_.notify_all();
    }
    void abort() {
        std::lock_guard lock(mutex_);
        aborted_ = true;
        ready_.notify_all();
        space_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_, space_;
    std::deque<std::future<T>> items_;
    std::size_t capacity_;
    bool closed_ = false, aborted_ = false;
};

// A file of text kept aside until it can go into the output (SAM's body waits
// for the @SQ lines of every target). Unlinked at once: nothing is left behind,
// whatever ends the process.
class Spool {
public:
    explicit Spool(const std::string& output_path) {
        std::filesystem::path folder;
        if (output_path.empty() || output_path == "-" || output_path.rfind("/dev/", 0) == 0) {
            const char* tmp = std::getenv("TMPDIR");
            folder = tmp && *tmp ? tmp : "/tmp";
        } else {
            folder = std::filesystem::path(output_path).parent_path();
            if (folder.empty()) folder = ".";
        }
        std::string name = (folder / ".alignscope-spool-XXXXXX").string();
        fd_ = ::mkstemp(name.data());
        if (fd_ < 0)
            throw Error(name.substr(0, name.size() - 6) +
                        "*: cannot create a temporary file for the SAM body: " + std::strerror(errno));
        ::unlink(name.c_str());
        path_ = folder.string();
    }
    ~Spool() {
        if (fd_ >= 0) ::close(fd_);
    }
    Spool(const Spool&) = delete;
    Spool& operator=(const Spool&) = delete;

    void write(const std::string& text) {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw Error(path_ + ": cannot write a temporary file: " + std::strerror(errno));
            done += static_cast<std::size_t>(n);
        }
    }
    void copy_to(std::ostream& out) {
        if (::lseek(fd_, 0, SEEK_SET) < 0)
            throw Error(path_ + ": cannot read a temporary file: " + std::strerror(errno));
        std::vector<char> buffer(std::size_t{4} << 20);
        for (;;) {
            const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw Error(path_ + ": cannot read a temporary file: " + std::strerror(errno));
            if (n == 0) return;
            out.write(buffer.data(), n);
        }
    }

private:
    int fd_ = -1;
    std::string path_;
};

// A stream's bytes appended to a string reserved ahead (a piece of text is
// about as long as the one before it): no doubling and copying as the text
// grows, as an ostringstream does.
class StringSink : public std::streambuf {
public:
    explicit StringSink(std::string& text) : text_(text) { setp(buffer_, buffer_ + sizeof buffer_); }
    ~StringSink() override { flush(); }
    StringSink(const StringSink&) = delete;
    StringSink& operator=(const StringSink&) = delete;
    void flush() {
        text_.append(pbase(), static_cast<std::size_t>(pptr() - pbase()));
        setp(buffer_, buffer_ + sizeof buffer_);
    }

protected:
    int_type overflow(int_type c) override {
        flush();
        if (!traits_type::eq_int_type(c, traits_type::eof())) text_.push_back(traits_type::to_char_type(c));
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* text, std::streamsize n) override {
        if (n <= epptr() - pptr()) return std::streambuf::xsputn(text, n);
        flush();
        text_.append(text, static_cast<std::size_t>(n));
        return n;
    }
    int sync() override {
        flush();
        return 0;
    }

private:
    std::string& text_;
    char buffer_[4096];
};

// Forwards a backend's timeline events and, when asked, sums their time by
// stage: host spans by name, device spans by category ("kernel", "copy").
class StageTally : public TimelineSink {
public:
    StageTally(TimelineSink* inner, bool tally) : inner_(inner), tally_(tally) {}
    bool wanted() const { return inner_ || tally_; }
    void record(TimelineEvent event) override {
        if (tally_) {
            const double seconds = static_cast<double>(event.end_ns - event.start_ns) * 1e-9;
            std::lock_guard lock(mutex_);
            sums_[event.category == "host" ? event.name : event.category] += seconds;
        }
        if (inner_) inner_->record(std::move(event));
    }
    void set_clock_source(const std::string& source) override {
        if (inner_) inner_->set_clock_source(source);
    }
    std::vector<std::pair<std::string, double>> sums() const {
        std::lock_guard lock(mutex_);
        return {sums_.begin(), sums_.end()};
    }

private:
    TimelineSink* inner_;
    bool tally_;
    mutable std::mutex mutex_;
    std::map<std::string, double> sums_;
};

// Result vectors of formatted chunks, for the next chunks to be aligned into
// (Backend::align_pairs_into): a GPU then writes a chunk's results into
// elements that exist, their strings and CIGARs with storage, instead of
// making a vector and some 1.7 KB of strings a pair with traceback. A vector
// comes here only when its chunk is done and a chunk takes one before a new
// one is made, so there are never more than the most chunks held at once;
// at most kKeptResultVectors wait here.
class ResultVectors {
public:
    static constexpr std::size_t kKeptResultVectors = 4;

    std::vector<Alignment> take() {
        std::lock_guard lock(mutex_);
        if (free_.empty()) return {};
        std::vector<Alignment> v = std::move(free_.back());
        free_.pop_back();
        return v;
    }
    void give_back(std::vector<Alignment>&& v) {
        if (v.capacity() == 0) return;   // a chunk that was never aligned
        std::vector<Alignment> dropped;  // destroyed outside the lock
        std::lock_guard lock(mutex_);
        if (free_.size() < kKeptResultVectors) free_.push_back(std::move(v));
        else
            dropped = std::move(v);
    }

private:
    std::mutex mutex_;
    std::vector<std::vector<Alignment>> free_;
};

struct Chunk {
    std::vector<Sequence> queries, targets;
    std::vector<Alignment> results;
    ResultVectors* recycle = nullptr;  // where `results` goes once the chunk is formatted
    Chunk() = default;
    Chunk(const Chunk&) = delete;
    Chunk& operator=(const Chunk&) = delete;
    ~Chunk() {
        if (recycle) recycle->give_back(std::move(results));
    }
};

// A formatted result's rows and CIGAR that hold more than twice the storage
// they use (an earlier, longer result's in a reused vector) given it back, so
// that what reused vectors keep is bounded by what their last chunk used.
void trim_result_storage(Alignment& a) {
    const auto roomy = [](std::size_t capacity, std::size_t size) { return capacity > 2 * size + 64; };
    if (roomy(a.query_aligned.capacity(), a.query_aligned.size())) a.query_aligned.shrink_to_fit();
    if (roomy(a.target_aligned.capacity(), a.target_aligned.size())) a.target_aligned.shrink_to_fit();
    const std::vector<CigarOp>& ops = a.cigar.ops();
    if (roomy(ops.capacity() * sizeof(CigarOp), ops.size() * sizeof(CigarOp))) {
        Cigar exact = a.cigar;  // a copy holds what it uses
        a.cigar = std::move(exact);
    }
}

// A chunk as the assembling thread hands it to the aligning one.
struct AssembledChunk {
    std::shared_ptr<Chunk> chunk;
    bool query_more = true, target_more = true;  // false: that file ended in this chunk
    bool inputs_end = false;                     // a first chunk of one pair after which both files end
};

// A piece of a chunk as text: kFormatPiece pairs or the chunk's rest.
struct FormattedChunk {
    std::string body;
    std::string references;  // SAM: the piece's targets as @SQ lines
    std::size_t pairs = 0;
    bool last = false;  // the chunk's last piece
};

constexpr std::size_t kFormatPiece = 4096;
// Blocks of the target file the SAM lister hands the pool at once: enough
// that it lists the whole file while the device starts (each waiting block
// is a few words; each done one a few dozen bytes a record until written).
constexpr std::size_t kListedAhead = 256;

// Records of one file as they come out of the parse stage, taken one by one.
class RecordFeed {
public:
    // The queue holds `min_blocks` at first; once the first block shows how
    // many records a block holds, as many as two chunks of `chunk_pairs` take
    // (however short or long the records, the reading keeps that far ahead).
    RecordFeed(OrderedQueue<std::vector<Sequence>>& queue, bool keep_ids, std::size_t chunk_pairs,
               std::size_t min_blocks)
        : queue_(queue), keep_ids_(keep_ids), chunk_pairs_(chunk_pairs), min_blocks_(min_blocks) {}
    // The next record, or false at the end of the file. Throws the stage's errors in file order.
    bool next(Sequence& out) {
        while (at_ == block_.size()) {
            if (done_) return false;
            std::optional<std::future<std::vector<Sequence>>> item = queue_.pop();
            if (!item) {
                done_ = true;
                return false;
            }
            block_ = item->get();
            at_ = 0;
            if (!sized_ && !block_.empty()) {
                sized_ = true;
                const std::size_t blocks = (2 * chunk_pairs_ + block_.size() - 1) / block_.size();
                queue_.set_capacity(std::clamp<std::size_t>(blocks, min_blocks_, 512));
            }
        }
        out = std::move(block_[at_++]);
        if (keep_ids_) ids.add(out.id);
        count.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    // True when the file has no record left (waits for the next block to know).
    bool at_end() {
        while (at_ == block_.size() && !done_) {
            std::optional<std::future<std::vector<Sequence>>> item = queue_.pop();
            if (!item) {
                done_ = true;
                break;
            }
            block_ = item->get();
            at_ = 0;
        }
        return at_ == block_.size();
    }
    // Records taken so far: counted by the assembling thread, read for the
    // progress estimate from the aligning one.
    std::atomic<std::uint64_t> count{0};
    RepeatedIds ids;

private:
    OrderedQueue<std::vector<Sequence>>& queue_;
    bool keep_ids_;
    std::size_t chunk_pairs_, min_blocks_;
    bool sized_ = false;
    std::vector<Sequence> block_;
    std::size_t at_ = 0;
    bool done_ = false;
};

std::size_t chunk_pairs_of(const PairPipelineSettings& settings) {
    if (settings.chunk_pairs) return settings.chunk_pairs;
    if (const char* text = std::getenv("ALIGNSCOPE_PAIR_CHUNK"); text && *text) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end && *end == 0 && value > 0 && value <= (1ull << 30)) return static_cast<std::size_t>(value);
        throw Error("ALIGNSCOPE_PAIR_CHUNK: expected a number of pairs from 1 to 1073741824, got '" +
                    std::string(text) + "'");
    }
    return kDefaultChunkPairs;
}

// Chunks aligned at once: the settings', else the environment's
// ALIGNSCOPE_PAIR_ALIGNERS (tests), else kGpuAligningChunks on a GPU and one
// on a CPU backend (which spreads each chunk over every core already).
int aligning_chunks_of(const PairPipelineSettings& settings, const Backend& backend) {
    if (settings.aligning_chunks > 0) return settings.aligning_chunks;
    if (const char* text = std::getenv("ALIGNSCOPE_PAIR_ALIGNERS"); text && *text) {
        char* end = nullptr;
        const unsigned long value = std::strtoul(text, &end, 10);
        if (end && *end == 0 && value >= 1 && value <= 16) return static_cast<int>(value);
        throw Error("ALIGNSCOPE_PAIR_ALIGNERS: expected a number of chunks from 1 to 16, got '" + std::string(text) +
                    "'");
    }
    return backend.info().kind == "gpu" ? kGpuAligningChunks : 1;
}

// One run of the pipeline: the stages as member functions, the threads and
// queues between them as members. The destructor stops every stage and waits
// for its thread, whether the run ended or threw.
class PairPipeline {
public:
    PairPipeline(const PairPipelineSettings& settings, const std::function<Backend&()>& backend, JobContext& context,
                 AtomicOutput& out, PairPipelineStats& stats)
        : settings_(settings),
          find_backend_(backend),
          context_(context),
          out_(out),
          stats_(stats),
          chunk_pairs_(chunk_pairs_of(settings)),
          threads_(settings.threads > 0 ? settings.threads
                                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
          sam_(settings.format == OutputFormat::Sam),
          same_file_(settings.query_path == settings.target_path),
          tally_(context.timeline, settings.stages),
          host_lanes_(context.timeline),
          // Both files open here, the queries' errors first, as when they are read whole.
          query_reader_(settings.query_path),
          target_reader_(settings.target_path),
          block_queue_(static_cast<std::size_t>(threads_) + 2),
          query_blocks_(block_queue_),
          target_blocks_(block_queue_),
          // Pieces formatted or being formatted: enough to keep every thread busy.
          formatted_(2 * static_cast<std::size_t>(threads_) + 2),
          // One chunk assembled ahead while the device aligns the one before.
          assembled_(1) {}
    ~PairPipeline();
    PairPipeline(const PairPipeline&) = delete;
    PairPipeline& operator=(const PairPipeline&) = delete;

    void run();

private:
    void open_inputs();
    void start_warm_up();
    void prepare_output();
    void start_readers();
    void read_file(RecordBlockReader& reader, AlphabetKind alphabet, OrderedQueue<std::vector<Sequence>>& queue,
                   int lane, std::atomic<std::uint64_t>* bytes);
    void write_pieces();
    void list_references();
    void write_sam_piece(const FormattedChunk& chunk);
    void write_sam_head();
    bool align_chunks();
    bool align_in_turn(std::shared_ptr<Chunk> chunk, PairJob job);
    bool drain_aligned(std::size_t keep);
    void assemble_chunks();
    void stop_assembling();
    void find_repeated_ids();
    std::shared_ptr<Chunk> next_chunk(bool& query_more, bool& target_more);
    void align_chunk(Chunk& chunk, const PairJob& job);
    bool format_chunk(const std::shared_ptr<Chunk>& chunk);
    FormattedChunk format_piece(Chunk& chunk, std::size_t begin, std::size_t end, bool last, int worker);
    void report(std::uint64_t items_done, std::uint64_t cells_done);
    void check_inputs_read();
    void write_output();
    void collect_stats();

    const PairPipelineSettings& settings_;
    const std::function<Backend&()>& find_backend_;
    Backend* backend_ = nullptr;  // found by the warm-up thread, joined before the first chunk
    JobContext& context_;
    AtomicOutput& out_;
    PairPipelineStats& stats_;
    const Clock::time_point start_ = Clock::now();
    const std::size_t chunk_pairs_;
    const int threads_;
    const bool sam_, same_file_;
    // Before every member that holds chunks: it outlives them.
    ResultVectors result_vectors_;
    StageTime read_time_, parse_time_, align_time_, format_time_, write_time_;
    StageTally tally_;
    TimelineSink* host_lanes_;

    RecordBlockReader query_reader_, target_reader_;
    AlphabetKind query_alphabet_{}, target_alphabet_{};
    PairJob job_template_;
    WriterContext writer_context_;

    std::exception_ptr warm_failure_;
    std::thread warm_;

    std::optional<Spool> references_spool_, body_spool_;
    std::string head_;
    // SAM into a file: a thread lists the targets' @SQ lines from the target
    // file itself, ahead of the pipeline, into `listed_spool_`. Once they are
    // all there the header goes out and the body follows as it comes, instead
    // of the whole body going through `body_spool_` after the last pair.
    // `listed_`: 0 listing, 1 listed, 2 given up (the body then waits, as when
    // the output is standard output or a pipe).
    std::optional<Spool> listed_spool_;
    std::thread lister_;
    std::atomic<int> listed_{2};
    bool head_written_ = false;                // the writer thread's; then read by write_output()
    std::atomic<bool> head_out_{false};        // head_written_, for the formatting threads
    std::atomic<std::size_t> piece_bytes_{0};  // the text of the last whole piece formatted

    const std::size_t block_queue_;
    OrderedQueue<std::vector<Sequence>> query_blocks_, target_blocks_;
    OrderedQueue<FormattedChunk> formatted_;
    OrderedQueue<AssembledChunk> assembled_;
    std::thread assembler_;
    // The files' lines about repeated ids (empty: none), found by the
    // assembling thread once it has read both files; read after it is joined.
    std::optional<std::pair<std::string, std::string>> repeated_ids_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> chunks_held_{0}, peak_chunks_{0};
    std::atomic<std::uint64_t> query_bytes_{0};
    std::uint64_t query_size_ = 0;
    std::exception_ptr write_failure_;

    std::optional<TaskPool> pool_;
    std::thread query_thread_, target_thread_;
    // The text is held back until kHeldBytes have come, so that a job that
    // fails early (files of different lengths, a bad record near the end of a
    // small file) writes nothing even where the output is a pipe or standard
    // output, which cannot be taken back; past that, it flows as it comes.
    std::vector<std::string> held_;  // whole chunks: no string doubling past the limit
    std::size_t held_bytes_ = 0;
    bool flowing_ = false;
    std::thread writer_thread_;

    std::optional<RecordFeed> queries_, targets_;
    // Chunks being aligned, oldest first, each with its alignment to come.
    struct Aligning {
        std::shared_ptr<Chunk> chunk;
        std::future<void> aligned;
    };
    std::deque<Aligning> aligning_;
    int aligning_chunks_ = 1;
    // Progress over the chunks being aligned at once, reported in turn.
    std::mutex progress_mutex_;
    std::uint64_t pairs_done_ = 0, cells_done_ = 0;        // chunks finished
    std::uint64_t pairs_partial_ = 0, cells_partial_ = 0;  // chunks under way, as far as reported
};

// On the way out, by success or failure: stop every stage, then wait for it.
PairPipeline::~PairPipeline() {
    stopping_ = true;
    for (Aligning& a : aligning_)
        if (a.aligned.valid()) a.aligned.wait();
    query_blocks_.abort();
    target_blocks_.abort();
    formatted_.abort();
    assembled_.abort();
    for (std::thread* thread : {&query_thread_, &target_thread_, &writer_thread_, &assembler_, &lister_})
        if (thread->joinable()) thread->join();
    if (warm_.joinable()) warm_.join();
}

void PairPipeline::run() {
    // The device first: its start-up is the longest wait before the first
    // chunk, and needs nothing from the files (its errors still come after
    // theirs, with the first chunk).
    start_warm_up();
    open_inputs();
    prepare_output();
    query_size_ = query_reader_.file_size();
    pool_.emplace(threads_);
    if (listed_spool_) {
        listed_ = 0;
        lister_ = std::thread([this] { list_references(); });
    }
    start_readers();
    writer_thread_ = std::thread([this] { write_pieces(); });
    if (align_chunks()) return;  // handed back
    formatted_.close();
    writer_thread_.join();
    if (write_failure_) std::rethrow_exception(write_failure_);
    check_inputs_read();
    write_output();
    collect_stats();
}

// The alphabets from the files' first blocks, the job and the writer's scheme.
void PairPipeline::open_inputs() {
    {
        StageSpan span(read_time_, host_lanes_, "read", 0);
        query_alphabet_ = settings_.read.alphabet ? *settings_.read.alphabet : query_reader_.detect_alphabet();
        target_alphabet_ = settings_.read.alphabet ? *settings_.read.alphabet : target_reader_.detect_alphabet();
    }
    for (const RecordBlockReader* reader : {&query_reader_, &target_reader_})
        if (reader->empty()) throw Error(reader->path() + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    job_template_ = settings_.make_job(query_alphabet_, target_alphabet_);
    writer_context_ = settings_.writer;
    writer_context_.scheme = job_template_.scheme;
}

// The device starts (a GPU's context, streams and buffers) while the input is read.
void PairPipeline::start_warm_up() {
    warm_ = std::thread([this] {
        const Clock::time_point t0 = Clock::now();
        try {
            backend_ = &find_backend_();
            backend_->warm_up();
        } catch (...) {
            warm_failure_ = std::current_exception();
        }
        stats_.warm_up = seconds_since(t0);
    });
}

void PairPipeline::prepare_output() {
    if (sam_) {
        references_spool_.emplace(out_.path());
        body_spool_.emplace(out_.path());
        // Only a plain file can be read twice; only a file can take the
        // header before the job is known to succeed (it is put in place at
        // the end, or not at all).
        if (!out_.direct() && settings_.target_path != "-" && target_reader_.file_size() > 0)
            listed_spool_.emplace(out_.path());
    }
    // Everything before the first alignment, by the writer itself: begin() and
    // end() with no alignment between them give the header each format opens
    // with (and end() adds nothing after alignments in any format).
    std::ostringstream text;
    auto writer = AlignmentWriter::create(settings_.format, text, writer_context_);
    writer->begin();
    writer->end();
    head_ = text.str();
}

void PairPipeline::start_readers() {
    query_thread_ = std::thread([this] { read_file(query_reader_, query_alphabet_, query_blocks_, 0, &query_bytes_); });
    target_thread_ = std::thread([this] { read_file(target_reader_, target_alphabet_, target_blocks_, 1, nullptr); });
}

// A reader thread: blocks of records cut from the file, parsed on the pool.
void PairPipeline::read_file(RecordBlockReader& reader, AlphabetKind alphabet,
                             OrderedQueue<std::vector<Sequence>>& queue, int lane, std::atomic<std::uint64_t>* bytes) {
    try {
        const std::string& path = reader.path();
        for (;;) {
            if (stopping_) break;
            RecordBlock block;
            bool more;
            {
                StageSpan span(read_time_, host_lanes_, "read", lane);
                more = reader.next(block);
            }
            if (bytes) bytes->store(reader.bytes_read());
            if (!more) break;
            // Known once the first block is cut (detect_alphabet() cuts it
            // before, unless the alphabet was given).
            const std::optional<SequenceFormat> format = reader.format();
            // A block cut by offset is read by the thread that parses it.
            auto parsed = pool_->submit([&path, &settings = settings_, &read_time = read_time_,
                                         &parse_time = parse_time_, host_lanes = host_lanes_, format, alphabet,
                                         block = std::move(block)](int worker) mutable {
                // Read into the thread's own buffer, kept from block to block:
                // a fresh megabyte each time would be mapped, faulted in and
                // unmapped again (the CLI maps allocations of 128 KiB and up).
                thread_local std::string buffer;
                const bool reads = !block.loaded;
                if (reads) {
                    StageSpan span(read_time, host_lanes, "read", 4 + worker);
                    block.text.swap(buffer);
                    load_record_block(block);
                }
                std::vector<Sequence> records;
                {
                    StageSpan span(parse_time, host_lanes, "parse", 4 + worker);
                    records = parse_record_block(block, path, format, alphabet, settings.read);
                }
                if (reads && block.text.capacity() <= kKeptBlockBytes) buffer.swap(block.text);
                return records;
            });
            if (!queue.push(std::move(parsed))) break;
        }
    } catch (...) {
        queue.push_failure(std::current_exception());
    }
    queue.close();
}

// The writer thread: formatted pieces in order, held back, spooled (SAM) or written.
void PairPipeline::write_pieces() {
    try {
        while (std::optional<std::future<FormattedChunk>> item = formatted_.pop()) {
            FormattedChunk chunk = item->get();
            StageSpan span(write_time_, host_lanes_, "write", 3, chunk.pairs);
            if (sam_) {
                write_sam_piece(chunk);
            } else if (flowing_) {
                out_.stream() << chunk.body;
            } else {
                held_bytes_ += chunk.body.size();
                held_.push_back(std::move(chunk.body));
                if (held_bytes_ >= kHeldBytes) {
                    out_.stream() << head_;
                    for (const std::string& text : held_) out_.stream() << text;
                    held_ = {};
                    flowing_ = true;
                }
            }
            if (chunk.last) chunks_held_.fetch_sub(1);
        }
    } catch (...) {
        write_failure_ = std::current_exception();
        formatted_.abort();
    }
}

// A SAM piece: into the output once the header is out, else into the spools.
void PairPipeline::write_sam_piece(const FormattedChunk& chunk) {
    if (!head_written_ && listed_.load(std::memory_order_acquire) == 1) write_sam_head();
    if (head_written_) {
        out_.stream() << chunk.body;
        return;
    }
    references_spool_->write(chunk.references);
    body_spool_->write(chunk.body);
}

// @HD, every target's @SQ line as listed, the rest of the header, then the
// body spooled so far.
void PairPipeline::write_sam_head() {
    stats_.sam_head = seconds_since(start_);
    const std::size_t first_line = head_.find('\n') + 1;
    out_.stream() << head_.substr(0, first_line);
    listed_spool_->copy_to(out_.stream());
    out_.stream() << head_.substr(first_line);
    body_spool_->copy_to(out_.stream());
    head_written_ = true;
    head_out_.store(true, std::memory_order_release);
}

// The lister thread: the target file read again, block by block on the pool
// (as background tasks: the pipeline's own reading and formatting go first),
// each block's records as @SQ lines in file order (the same reader and parser
// as the pipeline's, so the same ids and lengths). It gives up, leaving the
// pipeline's own list to do, on any fault (the pipeline meets it too, and
// says it in its turn), on a file not cut by offset (gzip: read twice, it
// would take as long as the job), or when the pipeline stops.
void PairPipeline::list_references() {
    try {
        RecordBlockReader reader(settings_.target_path);
        const std::string& path = settings_.target_path;
        const auto list = [&path, &settings = settings_,
                           alphabet = target_alphabet_](const RecordBlock& block,
                                                        std::optional<SequenceFormat> block_format) {
            std::ostringstream text;
            const std::vector<Sequence> records =
                parse_record_block(block, path, block_format, alphabet, settings.read);
            std::vector<const Sequence*> references;
            references.reserve(records.size());
            for (const Sequence& record : records) references.push_back(&record);
            write_sam_references(text, references);
            return std::move(text).str();
        };
        std::deque<std::future<std::string>> listed;
        for (;;) {
            while (!listed.empty() && (listed.size() >= kListedAhead ||
                                       listed.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready)) {
                listed_spool_->write(listed.front().get());
                listed.pop_front();
            }
            RecordBlock block;
            if (stopping_ || !reader.next(block)) break;
            if (!block.source) {
                listed_.store(2, std::memory_order_release);
                return;
            }
            if (listed.size() < static_cast<std::size_t>(threads_)) {
                listed.push_back(pool_->submit([list, format = reader.format(),
                                                block = std::move(block)](int) { return list(block, format); },
                                               true));
            } else {
                // The pool has this thread's blocks enough to do (and the
                // pipeline's first): this one is listed here.
                std::promise<std::string> done;
                done.set_value(list(block, reader.format()));
                listed.push_back(done.get_future());
            }
        }
        while (!listed.empty()) {
            listed_spool_->write(listed.front().get());
            listed.pop_front();
        }
        listed_.store(stopping_ ? 2 : 1, std::memory_order_release);
    } catch (...) {
        listed_.store(2, std::memory_order_release);
    }
}

// With progress_mutex_ held (the chunks under way report from their threads).
void PairPipeline::report(std::uint64_t items_done, std::uint64_t cells_done) {
    if (!context_.progress) return;
    Progress progress;
    progress.items_done = items_done;
    progress.cells_done = cells_done;
    const std::uint64_t bytes = query_bytes_.load();
    // The total is not known until the files end: estimated from the share of the queries read.
    progress.items_total =
        query_size_ > 0 && bytes > 0
            ? std::max<std::uint64_t>(items_done, static_cast<std::uint64_t>(double(queries_->count.load()) *
                                                                             double(query_size_) / double(bytes)))
            : std::max<std::uint64_t>(items_done, queries_->count.load());
    context_.progress(progress);
}

// This thread: chunks of pairs, aligned one after another. True when the one
// pair was handed back (PairPipelineSettings::hand_back_single_pair).
// Chunks come from the assembling thread: gathering chunk k+1's records from
// the parsed blocks overlaps chunk k's alignment.
bool PairPipeline::align_chunks() {
    queries_.emplace(query_blocks_, true, chunk_pairs_, block_queue_);
    targets_.emplace(target_blocks_, !same_file_, chunk_pairs_, block_queue_);
    assembler_ = std::thread([this] { assemble_chunks(); });
    bool first = true;
    for (;;) {
        context_.throw_if_cancelled();
        std::optional<std::future<AssembledChunk>> item = assembled_.pop();
        if (!item) break;
        AssembledChunk assembled = item->get();  // the reading's errors, in file order
        std::shared_ptr<Chunk> chunk = std::move(assembled.chunk);
        if (chunk->queries.empty()) break;
        const std::size_t now_held = chunks_held_.fetch_add(1) + 1;
        std::size_t peak = peak_chunks_.load();
        while (now_held > peak && !peak_chunks_.compare_exchange_weak(peak, now_held)) {
        }

        PairJob job = job_template_;
        job.queries = &chunk->queries;
        job.targets = &chunk->targets;
        job.pairs.resize(chunk->queries.size());
        for (std::uint32_t k = 0; k < job.pairs.size(); ++k) job.pairs[k] = {k, k};
        if (first && chunk->queries.size() == 1 && assembled.inputs_end &&
            settings_.hand_back_single_pair(chunk->queries[0], chunk->targets[0])) {
            stats_.handed_back = true;
            stop_assembling();
            formatted_.close();
            writer_thread_.join();
            return true;
        }
        if (first) {
            if (warm_.joinable()) warm_.join();
            if (warm_failure_) std::rethrow_exception(warm_failure_);
            stats_.first_align = seconds_since(start_);
            aligning_chunks_ = aligning_chunks_of(settings_, *backend_);
            assembled_.set_capacity(static_cast<std::size_t>(aligning_chunks_));
            first = false;
        }
        if (!align_in_turn(std::move(chunk), std::move(job))) break;  // the writer failed
        if (!assembled.query_more || !assembled.target_more) break;
    }
    (void)drain_aligned(0);  // false: the writer failed, and run() says why
    stop_assembling();
    return false;
}

// Starts aligning the chunk once fewer than aligning_chunks_ are under way
// (the oldest then formatted, in order); one at a time, on this thread. False
// when the writer has failed.
bool PairPipeline::align_in_turn(std::shared_ptr<Chunk> chunk, PairJob job) {
    if (aligning_chunks_ <= 1) {
        align_chunk(*chunk, job);
        return format_chunk(chunk);
    }
    if (!drain_aligned(static_cast<std::size_t>(aligning_chunks_) - 1)) return false;
    Aligning next;
    next.chunk = chunk;
    next.aligned = std::async(std::launch::async,
                              [this, chunk = std::move(chunk), job = std::move(job)] { align_chunk(*chunk, job); });
    aligning_.push_back(std::move(next));
    return true;
}

// Waits for the oldest chunks until `keep` remain under way, formatting each
// (a chunk's errors come in input order). False when the writer has failed.
bool PairPipeline::drain_aligned(std::size_t keep) {
    while (aligning_.size() > keep) {
        Aligning& oldest = aligning_.front();
        oldest.aligned.get();
        std::shared_ptr<Chunk> chunk = std::move(oldest.chunk);
        aligning_.pop_front();
        if (!format_chunk(chunk)) return false;
    }
    return true;
}

// The assembling thread: chunks of pairs from both files' parsed records, in
// order, until a file ends (that chunk is the last) or the pipeline stops.
void PairPipeline::assemble_chunks() {
    try {
        for (bool first = true;; first = false) {
            if (stopping_) break;
            AssembledChunk assembled;
            assembled.chunk = next_chunk(assembled.query_more, assembled.target_more);
            if (first && assembled.chunk->queries.size() == 1 && settings_.hand_back_single_pair)
                assembled.inputs_end = queries_->at_end() && targets_->at_end();
            const bool last = assembled.chunk->queries.empty() || !assembled.query_more || !assembled.target_more;
            std::promise<AssembledChunk> ready;
            ready.set_value(std::move(assembled));
            const bool pushed = assembled_.push(ready.get_future());
            if (pushed && last) find_repeated_ids();
            if (!pushed || last) break;
        }
    } catch (...) {
        assembled_.push_failure(std::current_exception());
    }
    assembled_.close();
}

// Both files read to their ends: their ids checked for repeats here, while
// the last chunk is aligned, not after it (the pool takes the target file's).
void PairPipeline::find_repeated_ids() {
    if (!settings_.warn) return;
    std::future<std::string> target_line;
    if (!same_file_) target_line = pool_->submit([this](int) { return targets_->ids.warning(settings_.target_path); });
    std::string query_line = queries_->ids.warning(settings_.query_path);
    repeated_ids_ = {std::move(query_line), target_line.valid() ? target_line.get() : std::string()};
}

// Ends the assembling thread (done, or no longer wanted) before the records'
// counts and names are read.
void PairPipeline::stop_assembling() {
    assembled_.abort();
    if (assembler_.joinable()) assembler_.join();
}

// Up to chunk_pairs pairs; when one file ends, the rest of the other is read
// (every record still checked) to count it.
std::shared_ptr<Chunk> PairPipeline::next_chunk(bool& query_more, bool& target_more) {
    auto chunk = std::make_shared<Chunk>();
    chunk->recycle = &result_vectors_;
    chunk->queries.reserve(chunk_pairs_);
    chunk->targets.reserve(chunk_pairs_);
    Sequence q, t;
    while (chunk->queries.size() < chunk_pairs_) {
        query_more = queries_->next(q);
        target_more = targets_->next(t);
        if (!query_more || !target_more) break;
        chunk->queries.push_back(std::move(q));
        chunk->targets.push_back(std::move(t));
    }
    if (!query_more || !target_more) {
        while (query_more && queries_->next(q)) {
        }
        while (target_more && targets_->next(t)) {
        }
    }
    return chunk;
}

// Aligns one chunk; several may run at once (their progress is summed).
void PairPipeline::align_chunk(Chunk& chunk, const PairJob& job) {
    const std::uint64_t chunk_cells = job.total_cells();
    JobContext chunk_context;
    chunk_context.cancel = context_.cancel;
    chunk_context.timeline = tally_.wanted() ? &tally_ : nullptr;
    std::uint64_t items_reported = 0, cells_reported = 0;  // this chunk's share of the partial sums
    chunk_context.progress = [&](const Progress& p) {
        std::lock_guard lock(progress_mutex_);
        if (p.items_done >= items_reported && p.cells_done >= cells_reported) {
            pairs_partial_ += p.items_done - items_reported;
            cells_partial_ += p.cells_done - cells_reported;
            items_reported = p.items_done;
            cells_reported = p.cells_done;
        }
        report(pairs_done_ + pairs_partial_, cells_done_ + cells_partial_);
    };
    {
        StageSpan span(align_time_, host_lanes_, "align", 2, job.pairs.size());
        chunk.results = result_vectors_.take();
        backend_->align_pairs_into(job, chunk_context, chunk.results);
    }
    if (chunk.results.size() != job.pairs.size()) throw Error("internal: backend returned a wrong number of results");
    std::lock_guard lock(progress_mutex_);
    pairs_partial_ -= items_reported;
    cells_partial_ -= cells_reported;
    pairs_done_ += job.pairs.size();
    cells_done_ += chunk_cells;
    ++stats_.chunks;
    stats_.last_aligned = seconds_since(start_);
    report(pairs_done_ + pairs_partial_, cells_done_ + cells_partial_);
}

// Formatted in pieces on the pool at once (a chunk's CIGAR strings and SAM
// records take longer than its alignment), written in order. False when the
// writer has failed.
bool PairPipeline::format_chunk(const std::shared_ptr<Chunk>& chunk) {
    const std::size_t count = chunk->results.size();
    for (std::size_t begin = 0; begin < count; begin += kFormatPiece) {
        const std::size_t end = std::min(count, begin + kFormatPiece);
        auto text = pool_->submit([this, chunk, begin, end, last = end == count](int worker) {
            return format_piece(*chunk, begin, end, last, worker);
        });
        if (!formatted_.push(std::move(text))) return false;
    }
    return true;
}

FormattedChunk PairPipeline::format_piece(Chunk& chunk, std::size_t begin, std::size_t end, bool last, int worker) {
    StageSpan span(format_time_, host_lanes_, "format", 4 + worker, end - begin);
    FormattedChunk piece;
    piece.pairs = end - begin;
    piece.last = last;
    piece.body.reserve(piece_bytes_.load(std::memory_order_relaxed) * 9 / 8);
    {
        StringSink sink(piece.body);
        std::ostream body(&sink);
        auto writer = AlignmentWriter::create(settings_.format, body, writer_context_);
        for (std::size_t k = begin; k < end; ++k) {
            Alignment& a = chunk.results[k];
            a.query_id = chunk.queries[k].id;
            a.target_id = chunk.targets[k].id;
            writer->write(a, chunk.queries[k], chunk.targets[k]);
            trim_result_storage(a);
        }
        writer.reset();
        body.flush();
    }
    if (!last) piece_bytes_.store(piece.body.size(), std::memory_order_relaxed);
    // Once SAM's header is out, the writer takes no more @SQ lines.
    if (sam_ && !head_out_.load(std::memory_order_acquire)) {
        std::vector<const Sequence*> references;
        references.reserve(end - begin);
        for (std::size_t k = begin; k < end; ++k) references.push_back(&chunk.targets[k]);
        std::ostringstream lines;
        write_sam_references(lines, references);
        piece.references = std::move(lines).str();
    }
    return piece;
}

// Both files are read: what reading alone can tell.
void PairPipeline::check_inputs_read() {
    if (settings_.warn) {
        if (!repeated_ids_) find_repeated_ids();  // the assembling thread stopped before
        for (const std::string& line : {repeated_ids_->first, repeated_ids_->second})
            if (!line.empty()) settings_.warn(line);
    }
    for (const RecordFeed* feed : {&*queries_, &*targets_})
        if (feed->count == 0)
            throw Error((feed == &*queries_ ? settings_.query_path : settings_.target_path) +
                        ": expected FASTA ('>') or FASTQ ('@') records, found none");
    if (queries_->count != targets_->count) throw Error(settings_.count_mismatch(queries_->count, targets_->count));
}

// What the writer held back, or SAM's header, @SQ lines and body from the spools.
void PairPipeline::write_output() {
    if (!sam_ && !flowing_) {
        StageSpan span(write_time_, host_lanes_, "write", 3);
        out_.stream() << head_;
        for (const std::string& text : held_) out_.stream() << text;
    }
    if (sam_ && !head_written_) {
        // @HD, the targets' @SQ lines, then the rest of the header and the body.
        const std::size_t first_line = head_.find('\n') + 1;
        StageSpan span(write_time_, host_lanes_, "write", 3);
        out_.stream() << head_.substr(0, first_line);
        references_spool_->copy_to(out_.stream());
        out_.stream() << head_.substr(first_line);
        body_spool_->copy_to(out_.stream());
    }
}

void PairPipeline::collect_stats() {
    stats_.pairs = pairs_done_;
    stats_.cells = cells_done_;
    stats_.read = read_time_.total();
    stats_.parse = parse_time_.total();
    stats_.align = align_time_.total();
    stats_.format = format_time_.total();
    stats_.write = write_time_.total();
    stats_.peak_chunks = peak_chunks_.load();
    stats_.device = tally_.sums();
    stats_.seconds = seconds_since(start_);
}

}  // namespace

PairPipelineStats run_pair_pipeline(const PairPipelineSettings& settings, Backend& backend, JobContext& context,
                                    AtomicOutput& out) {
    return run_pair_pipeline(
        settings, [&backend]() -> Backend& { return backend; }, context, out);
}

PairPipelineStats run_pair_pipeline(const PairPipelineSettings& settings, const std::function<Backend&()>& backend,
                                    JobContext& context, AtomicOutput& out) {
    PairPipelineStats stats;
    {
        PairPipeline pipeline(settings, backend, context, out, stats);
        pipeline.run();
    }  // every thread joined, the device's start-up included
    return stats;
}

std::string describe(const PairPipelineStats& s, const std::string& label) {
    char text[512];
    const double gcups = s.seconds > 0 ? double(s.cells) / s.seconds / 1e9 : 0.0;
    std::snprintf(text, sizeof text,
                  "%s: %llu pairs, %llu cells in %.3f s (%.1f GCUPS end to end), %llu chunks, at most %zu held; "
                  "busy seconds: read %.3f, parse %.3f, align %.3f, format %.3f, write %.3f; device start-up %.3f "
                  "beside the reading, first chunk aligned at %.3f s, last one back at %.3f s",
                  label.c_str(), static_cast<unsigned long long>(s.pairs), static_cast<unsigned long long>(s.cells),
                  s.seconds, gcups, static_cast<unsigned long long>(s.chunks), s.peak_chunks, s.read, s.parse, s.align,
                  s.format, s.write, s.warm_up, s.first_align, s.last_aligned);
    std::string line = text;
    if (s.sam_head > 0) {
        std::snprintf(text, sizeof text, ", SAM header out at %.3f s", s.sam_head);
        line += text;
    }
    if (!s.device.empty()) {
        line += "; inside align:";
        bool first = true;
        for (const auto& [name, seconds] : s.device) {
            std::snprintf(text, sizeof text, "%s %s %.3f", first ? "" : ",", name.c_str(), seconds);
            line += text;
            first = false;
        }
    }
    return line;
}

}  // namespace alignscope
