// Stage 3's CPU part of the long-pair pipeline (see long_traceback.hpp): the
// small segments' full-matrix tracebacks, in memory or streamed in path order.
#include "long_traceback.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;

// A traceback's operations as CIGAR runs.
std::vector<CigarOp> runs_of(const std::vector<char>& ops) {
    std::vector<CigarOp> runs;
    for (char op : ops) {
        if (!runs.empty() && runs.back().op == op) ++runs.back().length;
        else
            runs.push_back({op, 1});
    }
    return runs;
}

// The hand-over of streamed tracebacks: tracing threads claim segment x only
// while x < handed + window, so at most `window` tracebacks are held (running,
// or done and waiting for their turn) at any time: memory is bounded by the
// window, not by the alignment's length. The calling thread takes them in
// path order.
class TracebackWindow {
public:
    TracebackWindow(const std::vector<PathSegment>& segments, const std::uint8_t* q, const std::uint8_t* t,
                    const ScoringScheme& scheme, std::size_t window, const JobContext& context, LongPairStats& stats)
        : segments_(segments),
          q_(q),
          t_(t),
          scheme_(scheme),
          window_(window),
          context_(context),
          stats_(stats),
          ring_(window) {}

    // A tracing thread: claims segments until none is left, the window is
    // shut, or a traceback fails.
    void work() {
        std::vector<char> ops;
        for (std::size_t x = 0; claim(x);) {
            try {
                if (context_.cancelled()) throw Cancelled();
                ops.clear();
                traceback_segment(segments_[x], q_, t_, scheme_, ops);
                store(x, runs_of(ops), static_cast<std::int64_t>(ops.size()));
            } catch (...) {
                fail(std::current_exception());
                return;
            }
            finished_.notify_all();
        }
    }

    // Segment e's runs (the calling thread, in path order); false when the
    // job was cancelled first. Rethrows a tracing thread's failure.
    bool take(std::size_t e, std::vector<CigarOp>& runs) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            Slot& slot = ring_[e % window_];
            // Wake now and then to see a cancel while a long traceback runs.
            while (!stop_ && !slot.ready && !context_.cancelled())
                finished_.wait_for(lock, std::chrono::milliseconds(50));
            if (failure_) std::rethrow_exception(failure_);
            if (!slot.ready) return false;
            runs = std::move(slot.runs);
            slot.runs = {};
            slot.ready = false;
            held_columns_ -= slot.columns;
            --held_pieces_;
            handed_ = e + 1;
        }
        claimable_.notify_all();
        return true;
    }

    // No more claims: the threads end after their current traceback.
    void shut() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        claimable_.notify_all();
    }

private:
    struct Slot {
        std::vector<CigarOp> runs;
        std::int64_t columns = 0;
        bool ready = false;
    };

    bool claim(std::size_t& x) {
        std::unique_lock<std::mutex> lock(mutex_);
        const std::size_t count = segments_.size();
        claimable_.wait(lock, [&] { return stop_ || next_ >= count || next_ < handed_ + window_; });
        if (stop_ || next_ >= count) return false;
        x = next_++;
        stats_.stream_peak_pieces = std::max(stats_.stream_peak_pieces, ++held_pieces_);
        return true;
    }
    void store(std::size_t x, std::vector<CigarOp> runs, std::int64_t columns) {
        std::lock_guard<std::mutex> lock(mutex_);
        Slot& slot = ring_[x % window_];
        slot.runs = std::move(runs);
        slot.columns = columns;
        slot.ready = true;
        held_columns_ += slot.columns;
        stats_.stream_peak_columns = std::max(stats_.stream_peak_columns, held_columns_);
    }
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!failure_) failure_ = std::move(e);
        stop_ = true;
        claimable_.notify_all();
        finished_.notify_all();
    }

    const std::vector<PathSegment>& segments_;
    const std::uint8_t* q_;
    const std::uint8_t* t_;
    const ScoringScheme& scheme_;
    const std::size_t window_;
    const JobContext& context_;
    LongPairStats& stats_;
    std::vector<Slot> ring_;
    std::mutex mutex_;
    std::condition_variable claimable_, finished_;
    std::size_t next_ = 0, handed_ = 0;
    std::int64_t held_pieces_ = 0, held_columns_ = 0;
    bool stop_ = false;
    std::exception_ptr failure_;
};

}  // namespace

void traceback_segment(const PathSegment& seg, const std::uint8_t* q, const std::uint8_t* t, const ScoringScheme& s,
                       std::vector<char>& ops) {
    const I64 h = seg.to.i - seg.from.i, w = seg.to.j - seg.from.j;
    if (h < 0 || w < 0) throw Error("internal error in the long-pair pipeline: a segment runs backwards");
    const I64 open = s.gap_open, extend = s.gap_extend;
    const auto W = static_cast<std::size_t>(w + 1);
    // Direction bits per cell: H source (0 diag, 1 E, 2 F) in bits 0-1; E came
    // from E (extend) in bit 2; F came from F in bit 3.
    std::vector<std::uint8_t> dir(static_cast<std::size_t>(h + 1) * W, 0);
    std::vector<I64> H(W);
    const bool start_gap = seg.from.in_gap;
    H[0] = start_gap ? kNegInf : 0;
    for (I64 j = 1; j <= w; ++j) {
        H[static_cast<std::size_t>(j)] = start_gap ? kNegInf : -(open + (j - 1) * extend);
        dir[static_cast<std::size_t>(j)] = 1 | (j > 1 ? 4 : 0);
    }
    std::vector<I64> Fcol(W, kNegInf);  // F of the row above, per column
    I64 final_f = kNegInf;
    for (I64 i = 1; i <= h; ++i) {
        const int a = q[seg.from.i + i - 1];
        I64 diag = H[0];
        // Column 0: a vertical gap from the corner.
        const I64 f0 = start_gap ? -(i * extend) : -(open + (i - 1) * extend);
        H[0] = f0;
        Fcol[0] = f0;
        dir[static_cast<std::size_t>(i) * W] = 2 | ((i > 1 || start_gap) ? 8 : 0);
        I64 e = kNegInf;
        for (I64 j = 1; j <= w; ++j) {
            const auto J = static_cast<std::size_t>(j);
            std::uint8_t d = 0;
            const I64 e_ext = e - extend, e_open = H[J - 1] - open;
            if (e_ext > e_open) d |= 4;
            e = std::max(e_ext, e_open);
            const I64 f_ext = Fcol[J] - extend, f_open = H[J] - open;
            if (f_ext > f_open) d |= 8;
            const I64 f = std::max(f_ext, f_open);
            const I64 g = diag + s.matrix.score(a, t[seg.from.j + j - 1]);
            I64 v = g;
            if (e > v) {
                v = e;
                d = static_cast<std::uint8_t>((d & ~3) | 1);
            }
            if (f > v) {
                v = f;
                d = static_cast<std::uint8_t>((d & ~3) | 2);
            }
            diag = H[J];
            H[J] = std::max<I64>(v, kNegInf);
            Fcol[J] = std::max<I64>(f, kNegInf);
            dir[static_cast<std::size_t>(i) * W + J] = d;
        }
        if (i == h) final_f = Fcol[static_cast<std::size_t>(w)];
    }
    if (h == 0) final_f = kNegInf;
    const I64 value = seg.to.in_gap ? final_f : H[static_cast<std::size_t>(w)];
    if (value != seg.score)
        throw Error("internal error in the long-pair traceback: a segment of " + std::to_string(h) + " x " +
                    std::to_string(w) + " cells scores " + std::to_string(value) + ", expected " +
                    std::to_string(seg.score));
    // Walk back. state 0 = H, 1 = E, 2 = F.
    std::vector<char> rev;
    I64 i = h, j = w;
    int state = seg.to.in_gap ? 2 : 0;
    while (i > 0 || j > 0) {
        const std::uint8_t d = dir[static_cast<std::size_t>(i) * W + static_cast<std::size_t>(j)];
        if (state == 0) state = d & 3;
        if (i == 0) state = 1;
        if (j == 0) state = 2;
        if (state == 0) {
            rev.push_back(q[seg.from.i + i - 1] == t[seg.from.j + j - 1] ? '=' : 'X');
            --i;
            --j;
        } else if (state == 1) {
            rev.push_back('D');
            state = (d & 4) ? 1 : 0;
            --j;
        } else {
            rev.push_back('I');
            state = (d & 8) ? 2 : 0;
            --i;
        }
    }
    ops.insert(ops.end(), rev.rbegin(), rev.rend());
}

std::vector<std::vector<char>> trace_segments(const std::vector<PathSegment>& segments, const std::uint8_t* q,
                                              const std::uint8_t* t, const ScoringScheme& scheme, unsigned workers,
                                              const JobContext& context) {
    std::vector<std::vector<char>> pieces(segments.size());
    std::atomic<std::size_t> next_index{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&] {
        try {
            for (std::size_t x; (x = next_index.fetch_add(1)) < segments.size();) {
                if (context.cancelled()) return;
                traceback_segment(segments[x], q, t, scheme, pieces[x]);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next_index = segments.size();
        }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (std::thread& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
    context.throw_if_cancelled();
    return pieces;
}

void stream_tracebacks(const std::vector<PathSegment>& segments, const std::uint8_t* q, const std::uint8_t* t,
                       const ScoringScheme& scheme, unsigned workers, std::size_t window, const JobContext& context,
                       Alignment& a, PathScorer& scorer, AlignmentSink& sink, LongPairStats& stats) {
    TracebackWindow hand_over(segments, q, t, scheme, window, context, stats);
    std::vector<std::thread> pool;
    // Whatever ends the hand-over (done, an error, a cancel, the sink
    // throwing), the threads stop and are joined before the window goes.
    struct Join {
        std::vector<std::thread>& pool;
        TracebackWindow& hand_over;
        ~Join() {
            hand_over.shut();
            for (std::thread& th : pool) th.join();
        }
    } join{pool, hand_over};
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back([&hand_over] { hand_over.work(); });
    for (std::size_t e = 0; e < segments.size(); ++e) {
        std::vector<CigarOp> runs;
        if (!hand_over.take(e, runs)) break;  // cancelled (thrown below)
        context.throw_if_cancelled();
        if (runs.empty()) continue;
        for (const CigarOp& run : runs) {
            scorer.push(run.op, run.length);
            a.cigar.push(run.op, run.length);
        }
        sink.columns(runs);
        ++stats.streamed_pieces;
    }
    context.throw_if_cancelled();
}

void finish_streamed_path(Alignment& a, const PathScorer& scorer, const char* who) {
    if (scorer.query_next() - 1 != a.query_end || scorer.target_next() - 1 != a.target_end)
        throw Error(std::string("internal error in ") + who + ": the streamed alignment ends at query " +
                    std::to_string(scorer.query_next() - 1) + ", target " + std::to_string(scorer.target_next() - 1) +
                    ", the DP said " + std::to_string(a.query_end) + ", " + std::to_string(a.target_end));
    if (scorer.score() != a.score)
        throw Error(std::string("internal error in ") + who + ": the alignment re-scores to " +
                    std::to_string(scorer.score()) + ", the DP said " + std::to_string(a.score));
    a.stats = scorer.stats();
}

}  // namespace alignscope::longpair
