// The traceback pass of the intra families (G = 4 to 32 threads per pair):
// inter_s32<mode::traceback>'s global pass over the aligned region, with
// the same 4-bit directions in the same words and the same walk, laid out like
// local_s16.cuh: loop bounds the same for the whole warp and full-warp
// shuffles, four columns per chunk with thread 0 reading the target four
// residues at a time (the region starts anywhere in the sequence: a funnel
// shift of two aligned words) and handing them down with the rows, and the
// cell on H - open (Ho):
//     E  = max(E - e, Ho_left)
//     F  = max(F - e, Ho_up)
//     H  = max(Ho_diag + (s + o), E, F)   vimax3, the diagonal first on ties
//     Ho = H - o
// with its additions on the FMA pipe (ncu: the ALU pipe, which every
// maximum, compare and select uses, bounds the pass), and the directions
// inter_s32 sets (kNotDiagonal, kNotE, kExtendsE, kExtendsF).
// Roofline (SASS of trace_s32<4>, now intra_s32_chunked<4, traceback>): about 26.5 instructions a cell, 14.2 of
// them on the ALU pipe, 8.7 IMADs: ALU-bound at about 1,040 GCUPS on an
// H200; the pass runs at about 890 (the traceback case's kernel time less
// the score case's, protein 300x300).
// Padding columns of the warp's longer pairs are skipped, not computed: a
// global pass's registers must still hold column 0 when its first column
// comes (the ramp), and nothing of them is stored.
#pragma once

#include "pairwise/wavefront_s32.cuh"

namespace alignscope::kernels::device {

// The traceback region of a pair: m x n cells from q and s; a pair with
// nothing to trace keeps m = n = 0 and runs the warp's loops as padding
// (thread 0 writes the one-run CIGAR of a region with no rows or columns).
struct TraceRegion {
    int m = 0, n = 0;
    const std::uint8_t* q = nullptr;
    const std::uint8_t* s = nullptr;
    PairTask task{};
};

__device__ __forceinline__ TraceRegion trace_region(const PassParams& p, long long group, bool has_pair, int t) {
    TraceRegion region;
    region.q = region.s = p.residues;
    if (!has_pair) return region;
    region.task = p.tasks[group];
    PairResult& result = p.results[group];
    if (result.flags & (kEmpty | kSaturated)) return region;
    region.m = result.query_end - result.query_begin + 1;
    region.n = result.target_end - result.target_begin + 1;
    region.q += region.task.query_offset + result.query_begin - 1;
    region.s += region.task.target_offset + result.target_begin - 1;
    if (region.m == 0 || region.n == 0) {
        if (t == 0) write_one_run_cigar(p, result, region.m, region.n);
        region.m = region.n = 0;
    }
    return region;
}

// One thread's R rows of a traceback strip: byte offsets of the rows' query
// letters in a table column, Ho of the column to the left, and E.
template <int R>
struct TraceRows {
    int qoffset[R], ho_left[R], e_run[R];
};

// What thread 0 reads for a chunk of four columns: their residues and the
// strip boundary (Ho, F) above them.
struct TraceChunk {
    std::uint32_t word = 0;
    int2 up[wavefront::kChunkColumns];
};

// The cells of one column of a thread's rows, top to bottom, on Ho = H - o
// with the directions shifted in (row 0 ends in the top nibble); `letter` is
// the column's byte offset of its target letter. Additions are IMADs by
// `one` (always 1, unknown to the compiler), on the FMA pipe; the maxima,
// compares and selects keep the ALU pipe busy. Returns the direction word.
template <int R>
__device__ __forceinline__ std::uint32_t trace_column(TraceRows<R>& rows, const char* table_bytes, std::uint32_t letter,
                                                      int o, int e, int one, std::uint32_t sixteen, int& above, int& f,
                                                      int d) {
    using C = dp::Cell32;
    std::uint32_t bits = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int e_ext = C::add_imad(rows.e_run[r], -e, one), f_ext = C::add_imad(f, -e, one);
        const int e_new = C::max(e_ext, rows.ho_left[r]);
        f = C::max(f_ext, above);
        const int score = *reinterpret_cast<const int*>(table_bytes + (rows.qoffset[r] + static_cast<int>(letter)));
        const int diagonal = C::add_imad(d, score, one);
        const int h = C::max3(diagonal, e_new, f);
        const std::uint32_t source = h != diagonal ? (h != e_new ? kNotDiagonal | kNotE : kNotDiagonal) : 0u;
        bits =
            bits * sixteen + (source + (e_ext >= rows.ho_left[r] ? kExtendsE : 0u) + (f_ext >= above ? kExtendsF : 0u));
        d = rows.ho_left[r];
        rows.ho_left[r] = C::add_imad(h, -o, one);
        rows.e_run[r] = e_new;
        above = rows.ho_left[r];
    }
    return bits;
}

// One strip of the chunked traceback pass (file comment): every lane runs
// the warp's steps four columns a chunk, and stores a direction word per
// real column.
template <int G, int R>
__device__ __forceinline__ void trace_strip(const PassParams& p, const TraceRegion& region, const int* table, int strip,
                                            int strips, int steps, int t) {
    using Group = wavefront::WavefrontGroup<G>;
    constexpr unsigned full = 0xffffffffu;
    const int o = p.gap_open, e = p.gap_extend, n = region.n;
    // Always 1 and 16, but not to the compiler: multiplications by them stay
    // IMADs on the FMA pipe instead of becoming adds and shifts on the ALU
    // pipe, which the maxima and compares of the cells already fill.
    const int one = p.one;
    const std::uint32_t sixteen = static_cast<std::uint32_t>(p.one) << 4;
    const char* const table_bytes = reinterpret_cast<const char*>(table);
    const int column_bytes = (p.letters + 1) * static_cast<int>(sizeof(int));
    int2* boundary = reinterpret_cast<int2*>(p.boundary) + region.task.boundary_base;
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters);
    const std::uint32_t pad_word = pad * 0x01010101u;
    const bool top = t == 0;
    // Global boundaries in Ho: H(i, 0) = H(0, i) = -gap(i), H(0, 0) = 0.
    auto edge = [&](int k) { return -gap_cost(o, e, k) - o; };

    const int row0 = strip * G * R + t * R;  // this thread's rows are row0+1 .. row0+R
    // The target letter comes down the wavefront as its column's offset.
    TraceRows<R> rows;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        rows.qoffset[r] = (i <= region.m ? region.q[i - 1] : p.letters) * static_cast<int>(sizeof(int));
        rows.ho_left[r] = edge(i);
        rows.e_run[r] = kNegS32;
    }
    // Thread 0's diagonal at column 1 is H(row0, 0); the others take
    // theirs from above at the step before their first column, when the
    // thread above still holds column 0 in its bottom row.
    int diag_in = edge(row0);
    int bottom_h = rows.ho_left[R - 1], bottom_f = kNegS32;
    std::uint32_t letter = pad * column_bytes;
    const bool read_up = top && strip > 0 && strip < strips;
    const bool write_down = t == G - 1 && strip + 1 < strips;
    const bool live = strip < strips;
    std::uint32_t* trace =
        p.trace + region.task.trace_base + static_cast<std::uint64_t>(strip) * region.task.trace_steps * 32u + t;

    auto fetch = [&](int c0, TraceChunk& chunk) {
#pragma unroll
        for (int c = 0; c < wavefront::kChunkColumns; ++c)
            chunk.up[c] = make_int2(edge(c0 + c + 1), kNegS32);  // strip 0: row 0
        if (!top) return;
        chunk.word = wavefront::forward_residues(region.s, c0, n, pad_word);
        if (read_up) {
#pragma unroll
            for (int c = 0; c < wavefront::kChunkColumns; ++c)
                if (c0 + c < n) chunk.up[c] = boundary[static_cast<long long>(c0 + c + 1) * Group::per_warp];
        }
    };
    TraceChunk first;
    first.word = pad_word;
    auto column = [&](int step, int c, const TraceChunk& chunk) {
        std::uint32_t letter_in = Group::from_above(full, letter);
        int ho_up = Group::from_above(full, bottom_h);
        int f_up = Group::from_above(full, bottom_f);
        if (top) {
            letter_in = wavefront::residue_of(chunk.word, c) * column_bytes;
            ho_up = chunk.up[c].x;
            f_up = chunk.up[c].y;
        }
        letter = letter_in;
        const int j = Group::column(step, t);
        if (live && j >= 1 && j <= n) {
            int above = ho_up, f = f_up;
            const std::uint32_t bits =
                trace_column<R>(rows, table_bytes, letter, o, e, one, sixteen, above, f, diag_in);
            bottom_h = above;
            bottom_f = f;
            trace[static_cast<std::uint64_t>(j - 1 + t) * 32u] = bits;
            if (write_down) boundary[static_cast<long long>(j) * Group::per_warp] = make_int2(bottom_h, bottom_f);
        }
        diag_in = ho_up;
    };
    wavefront::for_each_chunk(steps, first, fetch, column);
    __syncwarp();  // this strip's boundary and directions before the next strip and the walk
}

// The traceback pass of the intra families, chunked (file comment).
template <int G, class Mode>
__global__ void __launch_bounds__(PairwiseIntraPolicy::kBlockThreads) intra_s32_chunked(PassParams p) {
    using Group = wavefront::WavefrontGroup<G>;
    constexpr int R = PairwiseIntraPolicy::kTraceRows;  // directions are packed R rows to a 32-bit word
    static_assert(G >= 4 && G <= 32, "the intra families");
    static_assert(Mode::trace, "the chunked 32-bit pass is the traceback pass");
    constexpr unsigned full = 0xffffffffu;
    // s + open: the diagonal term is Ho(i-1, j-1) + s + open.
    __shared__ int table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    load_table(table, p, p.gap_open);

    const int lane = threadIdx.x & 31;
    const int t = Group::thread(lane);
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const bool has_pair = group < p.count;
    if (__all_sync(full, !has_pair)) return;  // whole warps leave together

    const TraceRegion region = trace_region(p, group, has_pair, t);
    const int strips = (region.m + G * R - 1) / (G * R);
    const int warp_strips = __reduce_max_sync(full, static_cast<unsigned>(strips));
    const int warp_cols = __reduce_max_sync(full, static_cast<unsigned>(region.n));
    const int steps = (warp_cols + G - 1 + 3) & ~3;
    for (int strip = 0; strip < warp_strips; ++strip) trace_strip<G, R>(p, region, table, strip, strips, steps, t);

    if (t != 0 || region.m == 0) return;
    walk_and_write_cigar<G, R>(p, region.task, p.results[group], region.m, region.n);
}

}  // namespace alignscope::kernels::device
