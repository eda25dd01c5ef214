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
// The stages (a strip's rows, a chunk's fetch, a column of cells, and the
// walk in pass_common.cuh) are __forceinline__ and give the kernels the same
// SASS, byte for byte, as the one function they were cut from. The SASS moves
// with small changes of shape: the column's outputs through a returned
// struct, its inputs by reference, the table load through load_table, the
// region as a stage, or fetch_chunk called without the strip's lambda each
// changed it (a rewrite over for_each_chunk took 80 registers where this
// takes 88 and ran 5.5 % slower on an H100). Compare the kernels' .text
// sections before and after a change here, or time it on the GPU.
#pragma once

#include "pairwise/wavefront_s32.cuh"

namespace alignscope::kernels::device {

// One column of a thread's R rows, top down: `above` and `f` come in as the
// Ho and F of the row above and leave as the bottom row's, diag_in is Ho of
// the row above in the previous column, and ho_left and e_run hold each row's
// Ho and E of the previous column and leave with this one's. Returns the
// column's directions, row 0 in the top nibble.
template <int R>
__device__ __forceinline__ std::uint32_t trace_column(int (&ho_left)[R], int (&e_run)[R], const int (&qoffset)[R],
                                                      const char* const table_bytes, std::uint32_t letter, int diag_in,
                                                      int o, int e, int one, std::uint32_t sixteen, int& above,
                                                      int& f) {
    int d = diag_in;
    std::uint32_t bits = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        // Additions as IMADs by `one`, on the FMA pipe; the maxima, compares
        // and selects keep the ALU pipe busy.
        const int e_ext = e_run[r] * one - e, f_ext = f * one - e;
        const int e_new = max(e_ext, ho_left[r]);
        f = max(f_ext, above);
        const int score = *reinterpret_cast<const int*>(table_bytes + (qoffset[r] + static_cast<int>(letter)));
        const int diagonal = d * one + score;
        const int h = __vimax3_s32(diagonal, e_new, f);
        // The direction, shifted in: row 0 ends in the top nibble.
        const std::uint32_t source = h != diagonal ? (h != e_new ? kNotDiagonal | kNotE : kNotDiagonal) : 0u;
        bits = bits * sixteen + (source + (e_ext >= ho_left[r] ? kExtendsE : 0u) + (f_ext >= above ? kExtendsF : 0u));
        d = ho_left[r];
        ho_left[r] = h * one - o;
        e_run[r] = e_new;
        above = ho_left[r];
    }
    return bits;
}

// A strip's rows at column 0: the byte offset of each row's query letter in
// a table column (the pad letter past row m) and the global left boundary,
// Ho(i, 0) from `edge`, with no E run yet.
template <int R, class Edge>
__device__ __forceinline__ void begin_strip_rows(int (&qoffset)[R], int (&ho_left)[R], int (&e_run)[R],
                                                 const PassParams& p, const Edge& edge, int row0, int m,
                                                 const std::uint8_t* q) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        qoffset[r] = (i <= m ? q[i - 1] : p.letters) * static_cast<int>(sizeof(int));
        ho_left[r] = edge(i);
        e_run[r] = kNegS32;
    }
}

// What the chunk of columns c0 + 1 .. c0 + 4 takes from above: the strip's
// upper boundary in `u` (row 0's, or with read_up the boundary the previous
// strip stored), and on thread 0 the chunk's four target residues in `w`.
template <class Edge>
__device__ __forceinline__ void fetch_chunk(int c0, std::uint32_t& w, int2* u, const Edge& edge, bool top,
                                            const std::uint8_t* s, int n, std::uint32_t pad_word, bool read_up,
                                            int2* boundary, int stride) {
#pragma unroll
    for (int k = 0; k < 4; ++k) u[k] = make_int2(edge(c0 + k + 1), kNegS32);  // strip 0: row 0
    if (!top) return;
    w = wavefront::forward_residues(s, c0, n, pad_word);
    if (read_up) {
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (c0 + k < n) u[k] = boundary[static_cast<long long>(c0 + k + 1) * stride];
    }
}

// The traceback pass of the intra families, chunked (file comment).
template <int G, class Mode>
__global__ void __launch_bounds__(PairwiseIntraPolicy::kBlockThreads) intra_s32_chunked(PassParams p) {
    static_assert(Mode::trace, "the chunked 32-bit pass is the traceback pass");
    constexpr int R = PairwiseIntraPolicy::kTraceRows;  // directions are packed R rows to a 32-bit word
    static_assert(G >= 4 && G <= 32, "the intra families");
    constexpr unsigned full = 0xffffffffu;
    // s + open: the diagonal term is Ho(i-1, j-1) + s + open.
    __shared__ int table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    const int dim = p.letters + 1;
    for (int k = threadIdx.x; k < dim * dim; k += blockDim.x) table[k] = p.matrix[k] + p.gap_open;
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int t = lane % G;
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const bool has_pair = group < p.count;
    if (__all_sync(full, !has_pair)) return;  // whole warps leave together

    // The region: m x n cells; a pair with nothing to trace keeps m = n = 0
    // and runs the warp's loops as padding.
    int m = 0, n = 0;
    const std::uint8_t* q = p.residues;
    const std::uint8_t* s = p.residues;
    PairTask task{};
    if (has_pair) {
        task = p.tasks[group];
        PairResult& result = p.results[group];
        if (!(result.flags & (kEmpty | kSaturated))) {
            m = result.query_end - result.query_begin + 1;
            n = result.target_end - result.target_begin + 1;
            q += task.query_offset + result.query_begin - 1;
            s += task.target_offset + result.target_begin - 1;
            if (m == 0 || n == 0) {
                if (t == 0) write_one_run_cigar(p, result, m, n);
                m = n = 0;
            }
        }
    }

    const int o = p.gap_open, e = p.gap_extend;
    // Always 1 and 16, but not to the compiler: multiplications by them stay
    // IMADs on the FMA pipe instead of becoming adds and shifts on the ALU
    // pipe, which the maxima and compares of the cells already fill.
    const int one = p.one;
    const std::uint32_t sixteen = static_cast<std::uint32_t>(p.one) << 4;
    const char* const table_bytes = reinterpret_cast<const char*>(table);
    const int column_bytes = dim * static_cast<int>(sizeof(int));
    constexpr int strip_rows = G * R;
    const int strips = (m + strip_rows - 1) / strip_rows;
    const int warp_strips = __reduce_max_sync(full, static_cast<unsigned>(strips));
    const int warp_cols = __reduce_max_sync(full, static_cast<unsigned>(n));
    const int steps = (warp_cols + G - 1 + 3) & ~3;
    const int stride = 32 / G;  // boundary slots of the groups of a warp interleave
    int2* boundary = reinterpret_cast<int2*>(p.boundary) + task.boundary_base;
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters);
    const std::uint32_t pad_word = pad * 0x01010101u;
    const bool top = t == 0;
    // Global boundaries in Ho: H(i, 0) = H(0, i) = -gap(i), H(0, 0) = 0.
    auto edge = [&](int k) { return -gap_cost(o, e, k) - o; };

    for (int strip = 0; strip < warp_strips; ++strip) {
        const int row0 = strip * strip_rows + t * R;  // this thread's rows are row0+1 .. row0+R
        // Byte offsets of the rows' query letters in a table column; the
        // target letter comes down the wavefront as its column's offset.
        int qoffset[R], ho_left[R], e_run[R];
        begin_strip_rows<R>(qoffset, ho_left, e_run, p, edge, row0, m, q);
        // Thread 0's diagonal at column 1 is H(row0, 0); the others take
        // theirs from above at the step before their first column, when the
        // thread above still holds column 0 in its bottom row.
        int diag_in = edge(row0);
        int bottom_h = ho_left[R - 1], bottom_f = kNegS32;
        std::uint32_t letter = pad * column_bytes;
        const bool read_up = top && strip > 0 && strip < strips;
        const bool write_down = t == G - 1 && strip + 1 < strips;
        const bool live = strip < strips;
        std::uint32_t* trace =
            p.trace + task.trace_base + static_cast<std::uint64_t>(strip) * task.trace_steps * 32u + t;

        std::uint32_t word = pad_word, next_word = pad_word;
        int2 up[4], next_up[4];
        auto fetch = [&](int c0, std::uint32_t& w, int2* u) {
            fetch_chunk(c0, w, u, edge, top, s, n, pad_word, read_up, boundary, stride);
        };
        fetch(0, word, up);

        for (int s4 = 0; s4 < steps; s4 += 4) {
            fetch(s4 + 4, next_word, next_up);
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                std::uint32_t letter_in = __shfl_up_sync(full, letter, 1, G);
                int ho_up = __shfl_up_sync(full, bottom_h, 1, G);
                int f_up = __shfl_up_sync(full, bottom_f, 1, G);
                if (top) {
                    letter_in = ((word >> (8 * c)) & 0xffu) * column_bytes;
                    ho_up = up[c].x;
                    f_up = up[c].y;
                }
                letter = letter_in;
                const int j = s4 + c - t + 1;
                if (live && j >= 1 && j <= n) {
                    int above = ho_up, f = f_up;
                    const std::uint32_t bits = trace_column<R>(ho_left, e_run, qoffset, table_bytes, letter, diag_in, o,
                                                               e, one, sixteen, above, f);
                    bottom_h = above;
                    bottom_f = f;
                    trace[static_cast<std::uint64_t>(j - 1 + t) * 32u] = bits;
                    if (write_down) boundary[static_cast<long long>(j) * stride] = make_int2(bottom_h, bottom_f);
                }
                diag_in = ho_up;
            }
            word = next_word;
#pragma unroll
            for (int k = 0; k < 4; ++k) up[k] = next_up[k];
        }
        __syncwarp();  // this strip's boundary and directions before the next strip and the walk
    }

    if (t != 0 || m == 0) return;
    walk_and_write_cigar<G, R>(p, task, p.results[group], m, n);
}

}  // namespace alignscope::kernels::device
