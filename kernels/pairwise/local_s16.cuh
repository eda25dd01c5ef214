// The local 16-bit pass of the intra families (G = 4 to 32 threads per group,
// two pairs per group in the halves of every register), forward and reverse:
// intra_s16's cells and per-thread query profile, laid out like the
// database scan (search/db_scan_kernel.cuh) so that a column costs little
// beyond its cells:
//  - every loop bound is the same for the whole warp (its longest pair sets
//    them; pairs arrive longest first, so little is wasted), so the shuffles
//    that hand rows down the wavefront are full-warp ones with no convergence
//    bookkeeping, and padding rows and columns are computed rather than
//    skipped (code `letters` scores 0; see the end-cell note below);
//  - columns go four at a time: thread 0 of a group reads four target
//    residues of each pair in one word (reversed in the reverse pass) and the
//    strip boundary one chunk ahead, and hands the residues down with the rows;
//  - the end cell is tracked without a branch. Per column, the maximum of the
//    thread's rows goes into a key per pair, value above 0xffff - j, so one
//    integer maximum keeps the larger score and, at an equal score, the
//    earlier column (the reference's order: score, then smaller j, then
//    smaller i). When a key rises, the column's values are kept (one LOP3 per
//    register, under a per-half mask); at the end of a strip whose keys rose
//    the kept column gives the first row. The branch this replaces ran in most
//    columns: along a homologous pair's alignment some lane of a warp raises
//    its best in nearly every column.
// Pads never win: a padding cell's value is that of a real cell with a smaller
// j or i (diagonal from the last real row or column, or a gap from a real cell
// minus a penalty), which the order prefers, and the groups' merge keeps it.
// The key holds j in 16 bits, so the host sends longer targets to
// intra_s16 (kLocalS16MaxColumns).
// Roofline (SASS of local_s16<4>, now intra_s16_chunked<4>, CUDA 13.0, sm_90): a column of 8 rows x 2
// pairs costs 133 instructions, 88 of them on the ALU pipe (36 DPX, the
// score and key PRMTs, the kept-column LOP3s, compares and selects), which
// issues a warp instruction every 2 cycles: 512 cells per 176 cycles per
// scheduler, about 2,700 GCUPS on an H200's 528 schedulers at 1.755 GHz.
// Measured: 2,616 (protein 300x300, score and end cell); ncu: ALU 82%.
#pragma once

#include "pairwise/wavefront_s16.cuh"

namespace alignscope::kernels::device {

// Targets longer than this go to intra_s16 (policy: the end-cell key's 16 bits).
constexpr int kLocalS16MaxColumns = PairwiseIntraPolicy::kLocalS16MaxColumns;

// What thread 0 reads for a chunk of four columns: four residues of each pair
// (one word each) and the strip boundary (Ho, F) of the four columns.
struct LocalS16Chunk {
    std::uint32_t a = 0, b = 0;
    int2 up[wavefront::kChunkColumns];
};

// One thread's R rows of a strip of both pairs: H + bias of the column to the
// left, E, and the column kept when an end key last rose.
template <int R>
struct LocalS16Rows {
    dp::Cell16x2::word h_left[R], e_run[R], kept[R];
};

// The cells of one column of a thread's rows for both pairs, scores from the
// thread's profile at the column's letters (`code`: pair A's in the low
// half, pair B's in the high half); H and F in from the row above (above, f),
// d = Ho(row0, j-1); they leave as the bottom row's.
template <int R>
__device__ __forceinline__ void local_s16_column(LocalS16Rows<R>& rows, const uint2* my_profile, int dim,
                                                 std::uint32_t code, dp::Cell16x2::word& above, dp::Cell16x2::word& f,
                                                 dp::Cell16x2::word d, const dp::Cell16x2::word (&k)[4]) {
    using C = dp::Cell16x2;
    // k: zero, neg_extend, minus_open_word, one (see intra_s16_chunked).
    const uint2 scores_a = my_profile[(code & 0xffffu) * kS16BlockThreads];
    const uint2 scores_b = my_profile[(dim + (code >> 16)) * kS16BlockThreads];
    const std::uint32_t sa[2] = {scores_a.x, scores_a.y}, sb[2] = {scores_b.x, scores_b.y};
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const C::word score = byte_pair_s16x2(sa[r / 4], sb[r / 4], r % 4);
        const C::word left = rows.h_left[r];
        (void)dp::affine_cell_biased<C>(rows.h_left[r], rows.e_run[r], f, above, d, score, k[0], k[1], k[2], k[3]);
        d = left;
        above = rows.h_left[r];
    }
}

// The end cell after a column, without a branch: the column's maximum over
// the thread's rows, per pair, as a key value << 16 | 0xffff - j; one integer
// maximum keeps the larger score and, at an equal score, the earlier column.
// When a key rises, the column's values are kept (one LOP3 per register).
template <int R>
__device__ __forceinline__ void local_s16_column_key(LocalS16Rows<R>& rows, int j, int (&key)[2]) {
    using C = dp::Cell16x2;
    C::word column_max = rows.h_left[0];
#pragma unroll
    for (int r = 1; r + 1 < R; r += 2) column_max = C::max3(column_max, rows.h_left[r], rows.h_left[r + 1]);
    column_max = C::max(column_max, rows.h_left[R - 1]);
    const std::uint32_t jcode = static_cast<std::uint32_t>(0xffff - j);
    const int key_lo = static_cast<int>(__byte_perm(column_max, jcode, 0x1054));
    const int key_hi = static_cast<int>(__byte_perm(column_max, jcode, 0x3254));
    const bool up_lo = key_lo > key[0], up_hi = key_hi > key[1];
    key[0] = up_lo ? key_lo : key[0];
    key[1] = up_hi ? key_hi : key[1];
    const C::word mask = C::lane_mask(up_lo, up_hi);
#pragma unroll
    for (int r = 0; r < R; ++r) rows.kept[r] = C::select(mask, rows.h_left[r], rows.kept[r]);
}

// Where a strip raised a pair's key: its kept column gives the first row.
template <int R>
__device__ __forceinline__ void local_s16_strip_best(const LocalS16Rows<R>& rows, const int (&strip_key)[2],
                                                     const int (&key)[2], int row0, EndCandidates (&ends)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (key[h] == strip_key[h]) continue;
        const int value = key[h] >> 16;
        int first = R - 1;
#pragma unroll
        for (int r = R - 1; r >= 0; --r)
            if (dp::Cell16x2::lane(rows.kept[r], h) == value) first = r;
        ends[h].best_score = value;
        ends[h].best_i = row0 + first + 1;
        ends[h].best_j = 0xffff - (key[h] & 0xffff);
    }
}

// What the chunked pass needs of its group across the strips.
struct LocalS16Pass {
    GroupPairs pairs;
    int cols = 0, strips = 0, steps = 0;
    bool reverse = false;
    int2* boundary = nullptr;
};

// One strip of the chunked local pass: every lane of the warp runs the same
// steps (the warp's longest pair sets them), four columns a chunk; thread 0
// reads each chunk's residues and boundary a chunk ahead and hands the
// residue codes down with the rows (common/warp_wavefront.cuh).
template <int G, int R>
__device__ __forceinline__ void local_s16_strip(const PassParams& p, const LocalS16Pass& pass,
                                                const std::int16_t* table, uint2* my_profile, int strip, int t,
                                                const dp::Cell16x2::word (&k)[4], int (&key)[2],
                                                EndCandidates (&ends)[2]) {
    using C = dp::Cell16x2;
    using word = C::word;
    using Group = wavefront::WavefrontGroup<G>;
    constexpr unsigned full = 0xffffffffu;
    const GroupPairs& g = pass.pairs;
    const int dim = p.letters + 1, cols = pass.cols;
    const word neg = C::splat(C::kNeg);
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters);
    const std::uint32_t pad_word = pad * 0x01010101u;
    const bool top = t == 0;
    const int row0 = strip * G * R + t * R;
    build_profile_s16<R>(my_profile, table, dim, row0, g.m, g.q, g.dir, p.letters);
    LocalS16Rows<R> rows;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        rows.h_left[r] = 0;  // H = 0 in column 0
        rows.e_run[r] = neg;
        rows.kept[r] = 0;
    }
    const int strip_key[2] = {key[0], key[1]};
    word diag_in = 0, bottom_h = 0, bottom_f = neg;
    std::uint32_t code = pad | (pad << 16);
    // This group's boundary: read in strips 1 .. strips-1, written in
    // 0 .. strips-2 (later strips of the warp are padding rows under an
    // H = 0 border, like strip 0).
    const bool read_up = top && strip > 0 && strip < pass.strips;
    const bool write_down = t == G - 1 && strip + 1 < pass.strips;

    auto fetch = [&](int c0, LocalS16Chunk& chunk) {
#pragma unroll
        for (int c = 0; c < wavefront::kChunkColumns; ++c) chunk.up[c] = make_int2(0, static_cast<int>(neg));
        if (!top) return;
        if (pass.reverse) {
            chunk.a = wavefront::reversed_residues(g.s[0], c0, g.n[0], pad_word);
            chunk.b = wavefront::reversed_residues(g.s[1], c0, g.n[1], pad_word);
        } else {
            chunk.a = wavefront::aligned_residues(g.s[0], c0, g.n[0], pad_word);
            chunk.b = wavefront::aligned_residues(g.s[1], c0, g.n[1], pad_word);
        }
        if (read_up) {
#pragma unroll
            for (int c = 0; c < wavefront::kChunkColumns; ++c)
                if (c0 + c < cols) chunk.up[c] = pass.boundary[static_cast<long long>(c0 + c + 1) * Group::per_warp];
        }
    };
    LocalS16Chunk first;
    first.a = first.b = pad_word;
    auto column = [&](int step, int c, const LocalS16Chunk& chunk) {
        std::uint32_t code_in = Group::from_above(full, code);
        word ho_up = Group::from_above(full, bottom_h);
        word f_up = Group::from_above(full, bottom_f);
        if (top) {
            code_in = __byte_perm(chunk.a, chunk.b, c | ((4 + c) << 8)) & 0x00ff00ffu;
            ho_up = static_cast<word>(chunk.up[c].x);
            f_up = static_cast<word>(chunk.up[c].y);
        }
        code = code_in;
        const int j = Group::column(step, t);
        word above = ho_up, f = f_up;
        local_s16_column<R>(rows, my_profile, dim, code, above, f, diag_in, k);
        diag_in = ho_up;
        bottom_h = above;
        bottom_f = f;
        if (write_down && j >= 1 && j <= cols)
            pass.boundary[static_cast<long long>(j) * Group::per_warp] =
                make_int2(static_cast<int>(bottom_h), static_cast<int>(bottom_f));
        local_s16_column_key<R>(rows, j, key);
    };
    wavefront::for_each_chunk(pass.steps, first, fetch, column);
    local_s16_strip_best<R>(rows, strip_key, key, row0, ends);
    __syncwarp();  // this strip's boundary stores before the next strip's loads
}

// The local 16-bit pass of the intra families, chunked (file comment).
template <int G>
__global__ void __launch_bounds__(PairwiseIntraPolicy::kBlockThreads, PairwiseIntraPolicy::kLocalS16MinBlocks)
    intra_s16_chunked(PassParams p) {
    using C = dp::Cell16x2;
    using word = C::word;
    using Group = wavefront::WavefrontGroup<G>;
    constexpr int R = PairwiseIntraPolicy::kS16Rows;
    static_assert(G >= 4 && G <= 32 && kS16Profile<G>, "the intra families with a query profile");
    constexpr unsigned full = 0xffffffffu;
    __shared__ std::int16_t table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    extern __shared__ uint2 profile[];  // intra_s16's planes: (pair, letter) x thread
    load_table(table, p, p.gap_open);

    const int lane = threadIdx.x & 31;
    const int t = Group::thread(lane);
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const long long first_pair = 2 * group;
    const bool has_pairs = first_pair < p.count;
    if (__all_sync(full, !has_pairs)) return;  // whole warps leave together

    LocalS16Pass pass;
    pass.pairs = group_pairs(p, first_pair);
    const GroupPairs& g = pass.pairs;
    pass.reverse = p.kind == PassKind::Reverse;
    pass.boundary = has_pairs ? reinterpret_cast<int2*>(p.boundary) + p.tasks[first_pair].boundary_base : nullptr;
    const int o = p.gap_open;
    // Every value is held plus bias = open (affine_cell_biased), so Ho + bias
    // of H = 0 is 0, and what the registers hold after a cell is H itself.
    const word k[4] = {C::splat(o), C::splat(-p.gap_extend), 0u - C::splat(o), static_cast<word>(p.one)};
    const int rows = g.m[0] > g.m[1] ? g.m[0] : g.m[1];
    pass.cols = g.n[0] > g.n[1] ? g.n[0] : g.n[1];
    pass.strips = (rows + G * R - 1) / (G * R);
    const int warp_strips = __reduce_max_sync(full, static_cast<unsigned>(pass.strips));
    const int warp_cols = __reduce_max_sync(full, static_cast<unsigned>(pass.cols));
    pass.steps = (warp_cols + G - 1 + 3) & ~3;

    // Per pair (lo, hi): the key of the best cell so far (value << 16 |
    // 0xffff - j; 0xffff is "score 0", which never counts) and where it is.
    int key[2] = {0xffff, 0xffff};
    EndCandidates ends[2];
    ends[0].best_score = ends[1].best_score = 0;

    uint2* const my_profile = profile + threadIdx.x;
    for (int strip = 0; strip < warp_strips; ++strip)
        local_s16_strip<G, R>(p, pass, table, my_profile, strip, t, k, key, ends);

#pragma unroll
    for (int h = 0; h < 2; ++h) merge_group_ends<G, false>(full, ends[h]);
    if (t != 0) return;

#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (!g.active[h]) continue;
        // Every H is >= 0 and none above the best: the best is the largest.
        write_s16_result(p.kind, p.results[first_pair + h], true, !C::exact(ends[h].best_score, p.max_score, o),
                         ends[h].best_score, ends[h].best_score, ends[h].best_i, ends[h].best_j);
    }
}

}  // namespace alignscope::kernels::device
