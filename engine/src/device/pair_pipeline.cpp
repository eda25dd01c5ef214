// The streamed pair pipeline: two reader threads cut the files into blocks of
// records, a pool of threads parses them and formats finished chunks, this
// thread assembles chunks of pairs and aligns them on the backend, and a
// writer thread writes the chunks' text in input order. Bounded queues between
// the stages keep memory flat however long the files are.
#include <alignscope/device/pair_pipeline.hpp>

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
#include <thread>
#include <utility>

#include <unistd.h>

namespace alignscope {

namespace {

using Clock = std::chrono::steady_clock;

// Output held back before it starts to flow (see the writer thread).
constexpr std::size_t kHeldBytes = std::size_t{16} << 20;

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
        : time_(time), sink_(sink), name_(name), lane_(lane), items_(items), start_(Clock::now()),
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

// Worker threads taking tasks in submission order. Tasks never wait on the
// pipeline's queues, so the pool cannot deadlock.
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
    auto submit(Task task) -> std::future<decltype(task(0))> {
        auto packaged = std::make_shared<std::packaged_task<decltype(task(0))(int)>>(std::move(task));
        auto future = packaged->get_future();
        {
            std::lock_guard lock(mutex_);
            tasks_.emplace_back([packaged](int worker) { (*packaged)(worker); });
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
                wake_.wait(lock, [this] { return closing_ || !tasks_.empty(); });
                if (tasks_.empty()) return;
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task(worker);
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void(int)>> tasks_;
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
            throw Error(name.substr(0, name.size() - 6) + "*: cannot create a temporary file for the SAM body: " +
                        std::strerror(errno));
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
        if (::lseek(fd_, 0, SEEK_SET) < 0) throw Error(path_ + ": cannot read a temporary file: " + std::strerror(errno));
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

struct Chunk {
    std::vector<Sequence> queries, targets;
    std::vector<Alignment> results;
};

// A piece of a chunk as text: kFormatPiece pairs or the chunk's rest.
struct FormattedChunk {
    std::string body;
    std::string references;  // SAM: the piece's targets as @SQ lines
    std::size_t pairs = 0;
    bool last = false;  // the chunk's last piece
};

constexpr std::size_t kFormatPiece = 4096;

// Records of one file as they come out of the parse stage, taken one by one.
class RecordFeed {
public:
    // The queue holds `min_blocks` at first; once the first block shows how
    // many records a block holds, as many as two chunks of `chunk_pairs` take
    // (however short or long the records, the reading keeps that far ahead).
    RecordFeed(OrderedQueue<std::vector<Sequence>>& queue, bool keep_ids, std::size_t chunk_pairs, std::size_t min_blocks)
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
        ++count;
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
    std::uint64_t count = 0;
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

}  // namespace

PairPipelineStats run_pair_pipeline(const PairPipelineSettings& settings, Backend& backend, JobContext& context,
                                    AtomicOutput& out) {
    PairPipelineStats stats;
    const Clock::time_point start = Clock::now();
    const std::size_t chunk_pairs = chunk_pairs_of(settings);
    const int threads = settings.threads > 0 ? settings.threads
                                             : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const bool sam = settings.format == OutputFormat::Sam;
    StageTime read_time, parse_time, align_time, format_time, write_time;
    StageTally tally(context.timeline, settings.stages);
    TimelineSink* host_lanes = context.timeline;

    // Open both files (the queries' errors first, as when they are read whole)
    // and learn their alphabets from their first blocks.
    RecordBlockReader query_reader(settings.query_path);
    RecordBlockReader target_reader(settings.target_path);
    AlphabetKind query_alphabet, target_alphabet;
    {
        StageSpan span(read_time, host_lanes, "read", 0);
        query_alphabet = settings.read.alphabet ? *settings.read.alphabet : query_reader.detect_alphabet();
        target_alphabet = settings.read.alphabet ? *settings.read.alphabet : target_reader.detect_alphabet();
    }
    for (const RecordBlockReader* reader : {&query_reader, &target_reader})
        if (reader->empty()) throw Error(reader->path() + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    const PairJob job_template = settings.make_job(query_alphabet, target_alphabet);
    WriterContext writer_context = settings.writer;
    writer_context.scheme = job_template.scheme;

    // The device starts (a GPU's context, streams and buffers) while the input is read.
    std::exception_ptr warm_failure;
    std::thread warm([&] {
        const Clock::time_point t0 = Clock::now();
        try {
            backend.warm_up();
        } catch (...) {
            warm_failure = std::current_exception();
        }
        stats.warm_up = seconds_since(t0);
    });
    struct JoinOnExit {
        std::thread& thread;
        ~JoinOnExit() {
            if (thread.joinable()) thread.join();
        }
    } join_warm{warm};

    std::optional<Spool> references_spool, body_spool;
    if (sam) {
        references_spool.emplace(out.path());
        body_spool.emplace(out.path());
    }
    // Everything before the first alignment, by the writer itself: begin() and
    // end() with no alignment between them give the header each format opens
    // with (and end() adds nothing after alignments in any format).
    std::string head;
    {
        std::ostringstream text;
        auto writer = AlignmentWriter::create(settings.format, text, writer_context);
        writer->begin();
        writer->end();
        head = text.str();
    }

    const std::size_t block_queue = static_cast<std::size_t>(threads) + 2;
    OrderedQueue<std::vector<Sequence>> query_blocks(block_queue), target_blocks(block_queue);
    // Pieces formatted or being formatted: enough to keep every thread busy.
    OrderedQueue<FormattedChunk> formatted(2 * static_cast<std::size_t>(threads) + 2);
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> chunks_held{0}, peak_chunks{0};
    std::atomic<std::uint64_t> query_bytes{0};
    const std::uint64_t query_size = query_reader.file_size();
    std::exception_ptr write_failure;

    TaskPool pool(threads);
    auto read_file = [&](RecordBlockReader& reader, AlphabetKind alphabet, OrderedQueue<std::vector<Sequence>>& queue,
                         int lane, std::atomic<std::uint64_t>* bytes) {
        try {
            const std::string& path = reader.path();
            const std::optional<SequenceFormat> format = reader.format();
            for (;;) {
                if (stopping) break;
                RecordBlock block;
                bool more;
                {
                    StageSpan span(read_time, host_lanes, "read", lane);
                    more = reader.next(block);
                }
                if (bytes) bytes->store(reader.bytes_read());
                if (!more) break;
                auto parsed = pool.submit([&path, &settings, &parse_time, host_lanes, format, alphabet,
                                           block = std::move(block)](int worker) {
                    StageSpan span(parse_time, host_lanes, "parse", 4 + worker);
                    return parse_record_block(block, path, format, alphabet, settings.read);
                });
                if (!queue.push(std::move(parsed))) break;
            }
        } catch (...) {
            queue.push_failure(std::current_exception());
        }
        queue.close();
    };
    std::thread query_thread(read_file, std::ref(query_reader), query_alphabet, std::ref(query_blocks), 0, &query_bytes);
    std::thread target_thread(read_file, std::ref(target_reader), target_alphabet, std::ref(target_blocks), 1, nullptr);
    // The text is held back until kHeldBytes have come, so that a job that
    // fails early (files of different lengths, a bad record near the end of a
    // small file) writes nothing even where the output is a pipe or standard
    // output, which cannot be taken back; past that, it flows as it comes.
    std::vector<std::string> held;  // whole chunks: no string doubling past the limit
    std::size_t held_bytes = 0;
    bool flowing = false;
    std::thread writer_thread([&] {
        try {
            while (std::optional<std::future<FormattedChunk>> item = formatted.pop()) {
                FormattedChunk chunk = item->get();
                StageSpan span(write_time, host_lanes, "write", 3, chunk.pairs);
                if (sam) {
                    references_spool->write(chunk.references);
                    body_spool->write(chunk.body);
                } else if (flowing) {
                    out.stream() << chunk.body;
                } else {
                    held_bytes += chunk.body.size();
                    held.push_back(std::move(chunk.body));
                    if (held_bytes >= kHeldBytes) {
                        out.stream() << head;
                        for (const std::string& text : held) out.stream() << text;
                        held = {};
                        flowing = true;
                    }
                }
                if (chunk.last) chunks_held.fetch_sub(1);
            }
        } catch (...) {
            write_failure = std::current_exception();
            formatted.abort();
        }
    });
    // On the way out, by success or failure: stop every stage, then wait for it.
    struct StopOnExit {
        std::atomic<bool>& stopping;
        std::vector<std::function<void()>> aborts;
        std::vector<std::thread*> threads;
        ~StopOnExit() {
            stopping = true;
            for (auto& abort : aborts) abort();
            for (std::thread* thread : threads)
                if (thread->joinable()) thread->join();
        }
    } stop{stopping,
           {[&] { query_blocks.abort(); }, [&] { target_blocks.abort(); }, [&] { formatted.abort(); }},
           {&query_thread, &target_thread, &writer_thread}};

    // This thread: chunks of pairs, aligned one after another.
    const bool same_file = settings.query_path == settings.target_path;
    RecordFeed queries(query_blocks, true, chunk_pairs, block_queue),
        targets(target_blocks, !same_file, chunk_pairs, block_queue);
    std::uint64_t pairs_done = 0;
    bool first = true;
    auto report = [&](std::uint64_t items_done, std::uint64_t cells_done) {
        if (!context.progress) return;
        Progress progress;
        progress.items_done = items_done;
        progress.cells_done = cells_done;
        const std::uint64_t bytes = query_bytes.load();
        // The total is not known until the files end: estimated from the share of the queries read.
        progress.items_total = query_size > 0 && bytes > 0
                                   ? std::max<std::uint64_t>(items_done, static_cast<std::uint64_t>(
                                                                              double(queries.count) * double(query_size) / double(bytes)))
                                   : std::max<std::uint64_t>(items_done, queries.count);
        context.progress(progress);
    };
    for (;;) {
        context.throw_if_cancelled();
        auto chunk = std::make_shared<Chunk>();
        chunk->queries.reserve(chunk_pairs);
        chunk->targets.reserve(chunk_pairs);
        Sequence q, t;
        bool query_more = true, target_more = true;
        while (chunk->queries.size() < chunk_pairs) {
            query_more = queries.next(q);
            target_more = targets.next(t);
            if (!query_more || !target_more) break;
            chunk->queries.push_back(std::move(q));
            chunk->targets.push_back(std::move(t));
        }
        if (!query_more || !target_more) {
            // One file ended: count what is left of the other (still checking every record).
            while (query_more && queries.next(q)) {}
            while (target_more && targets.next(t)) {}
        }
        if (chunk->queries.empty()) break;
        const std::size_t now_held = chunks_held.fetch_add(1) + 1;
        std::size_t peak = peak_chunks.load();
        while (now_held > peak && !peak_chunks.compare_exchange_weak(peak, now_held)) {}

        PairJob job = job_template;
        job.queries = &chunk->queries;
        job.targets = &chunk->targets;
        job.pairs.resize(chunk->queries.size());
        for (std::uint32_t k = 0; k < job.pairs.size(); ++k) job.pairs[k] = {k, k};
        const std::uint64_t chunk_cells = job.total_cells();
        if (first && chunk->queries.size() == 1 && settings.hand_back_single_pair && queries.at_end() &&
            targets.at_end() && settings.hand_back_single_pair(chunk->queries[0], chunk->targets[0])) {
            stats.handed_back = true;
            formatted.close();
            writer_thread.join();
            return stats;
        }
        if (first) {
            if (warm.joinable()) warm.join();
            if (warm_failure) std::rethrow_exception(warm_failure);
            stats.first_align = seconds_since(start);
            first = false;
        }
        JobContext chunk_context;
        chunk_context.cancel = context.cancel;
        chunk_context.timeline = tally.wanted() ? &tally : nullptr;
        const std::uint64_t before = pairs_done, cells_before = stats.cells;
        chunk_context.progress = [&](const Progress& p) { report(before + p.items_done, cells_before + p.cells_done); };
        {
            StageSpan span(align_time, host_lanes, "align", 2, job.pairs.size());
            chunk->results = backend.align_pairs(job, chunk_context);
        }
        if (chunk->results.size() != job.pairs.size())
            throw Error("internal: backend returned a wrong number of results");
        pairs_done += job.pairs.size();
        stats.cells += chunk_cells;
        ++stats.chunks;
        report(pairs_done, stats.cells);

        // Formatted in pieces on the pool at once (a chunk's CIGAR strings and
        // SAM records take longer than its alignment), written in order.
        bool writer_failed = false;
        const std::size_t count = chunk->results.size();
        for (std::size_t begin = 0; begin < count && !writer_failed; begin += kFormatPiece) {
            const std::size_t end = std::min(count, begin + kFormatPiece);
            auto text = pool.submit([&, chunk, begin, end, last = end == count](int worker) {
                StageSpan span(format_time, host_lanes, "format", 4 + worker, end - begin);
                FormattedChunk piece;
                piece.pairs = end - begin;
                piece.last = last;
                std::ostringstream body;
                auto writer = AlignmentWriter::create(settings.format, body, writer_context);
                for (std::size_t k = begin; k < end; ++k) {
                    Alignment& a = chunk->results[k];
                    a.query_id = chunk->queries[k].id;
                    a.target_id = chunk->targets[k].id;
                    writer->write(a, chunk->queries[k], chunk->targets[k]);
                }
                piece.body = std::move(body).str();
                if (sam) {
                    std::vector<const Sequence*> references;
                    references.reserve(end - begin);
                    for (std::size_t k = begin; k < end; ++k) references.push_back(&chunk->targets[k]);
                    std::ostringstream lines;
                    write_sam_references(lines, references);
                    piece.references = std::move(lines).str();
                }
                return piece;
            });
            writer_failed = !formatted.push(std::move(text));
        }
        if (writer_failed) break;
        if (!query_more || !target_more) break;
    }
    formatted.close();
    writer_thread.join();
    if (write_failure) std::rethrow_exception(write_failure);

    // Both files are read: what reading alone can tell.
    if (settings.warn) {
        if (const std::string line = queries.ids.warning(settings.query_path); !line.empty()) settings.warn(line);
        if (!same_file)
            if (const std::string line = targets.ids.warning(settings.target_path); !line.empty()) settings.warn(line);
    }
    for (const RecordFeed* feed : {&queries, &targets})
        if (feed->count == 0)
            throw Error((feed == &queries ? settings.query_path : settings.target_path) +
                        ": expected FASTA ('>') or FASTQ ('@') records, found none");
    if (queries.count != targets.count) throw Error(settings.count_mismatch(queries.count, targets.count));

    if (!sam && !flowing) {
        StageSpan span(write_time, host_lanes, "write", 3);
        out.stream() << head;
        for (const std::string& text : held) out.stream() << text;
    }
    if (sam) {
        // @HD, the targets' @SQ lines, then the rest of the header and the body.
        const std::size_t first_line = head.find('\n') + 1;
        StageSpan span(write_time, host_lanes, "write", 3);
        out.stream() << head.substr(0, first_line);
        references_spool->copy_to(out.stream());
        out.stream() << head.substr(first_line);
        body_spool->copy_to(out.stream());
    }
    stats.pairs = pairs_done;
    stats.read = read_time.total();
    stats.parse = parse_time.total();
    stats.align = align_time.total();
    stats.format = format_time.total();
    stats.write = write_time.total();
    stats.peak_chunks = peak_chunks.load();
    stats.device = tally.sums();
    stats.seconds = seconds_since(start);
    return stats;
}

std::string describe(const PairPipelineStats& s, const std::string& label) {
    char text[512];
    const double gcups = s.seconds > 0 ? double(s.cells) / s.seconds / 1e9 : 0.0;
    std::snprintf(text, sizeof text,
                  "%s: %llu pairs, %llu cells in %.3f s (%.1f GCUPS end to end), %llu chunks, at most %zu held; "
                  "busy seconds: read %.3f, parse %.3f, align %.3f, format %.3f, write %.3f; device start-up %.3f "
                  "beside the reading, first chunk aligned at %.3f s",
                  label.c_str(), static_cast<unsigned long long>(s.pairs), static_cast<unsigned long long>(s.cells),
                  s.seconds, gcups, static_cast<unsigned long long>(s.chunks), s.peak_chunks, s.read, s.parse,
                  s.align, s.format, s.write, s.warm_up, s.first_align);
    std::string line = text;
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
