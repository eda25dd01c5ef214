// The long-pair strip kernel (see long_types.hpp for the data it works on).
//
// One warp sweeps a strip of 32 x R rows across all columns of its task.
// Lane t holds rows t*R+1 .. t*R+R of the strip in registers (H, E and H-open
// per row) and works on column s - t + 1 at step s: the anti-diagonal
// wavefront of CUDAlign's inner level, with the values of the row above
// arriving by __shfl_up_sync instead of shared memory. Lane 0 takes the row
// above the strip from the task's bus in global memory, in chunks of 32
// columns once the previous strip has published them (acquire/release on a
// per-strip progress counter); the strip's bottom row goes back to the bus in
// coalesced chunks of 32 the same way. The bus is one row per task: a strip
// reads column j before it overwrites it, and the next strip reads it only
// after, so concurrency needs no more memory than one row.
//
// Substitution scores come from a per-warp query profile in shared memory:
// word [c][q][lane] holds the scores (+128, as bytes) of rows 4q..4q+3 of
// that lane against residue code c, so each lane reads its own bank
// (conflict-free whatever residues the lanes meet) and one 32-bit load serves
// four cells. Per cell: one byte extract, one add, three DPX instructions
// (dp::Cell32's add_max for E and F, max3[_relu] for H: common/dp_cell.hpp)
// and one subtract.
#pragma once

#include "common/dp_cell.hpp"
#include "common/warp_wavefront.cuh"
#include "long/long_types.hpp"

#include <cuda_runtime.h>

namespace alignscope::kernels::longpass::device {

constexpr unsigned kFull = 0xffffffffu;
using Cell = dp::Cell32;  // the strip kernel's cells: 32-bit H, E, F

__device__ __forceinline__ int ld_acquire(const int* p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(int* p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_acquire_sys(const int* p) {
    int v;
    asm volatile("ld.acquire.sys.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_sys(int* p, int v) {
    asm volatile("st.release.sys.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// A pointer field of a task read from the launch's task list (read-only for
// the kernel's lifetime) rather than kept in a register.
template <typename T>
__device__ __forceinline__ T* reload_pointer(T* const* field) {
    return reinterpret_cast<T*>(__ldg(reinterpret_cast<const unsigned long long*>(field)));
}
__device__ __forceinline__ unsigned long long ld_volatile(const unsigned long long* p) {
    return *reinterpret_cast<const volatile unsigned long long*>(p);
}

__device__ __forceinline__ int edge_value(int kind, long long k, int open, int extend) {
    long long v;
    if (kind == kEdgeZero) return 0;
    if (kind == kEdgeGap) v = -(open + (k - 1) * static_cast<long long>(extend));
    else if (kind == kEdgeGapContinue)
        v = -(k * static_cast<long long>(extend));
    else
        return kNeg;
    return v < kNeg ? kNeg : static_cast<int>(v);
}
__device__ __forceinline__ int left_at(const LongTask& t, long long i, int open, int extend) {
    if (t.top == kEdgeExplicit) {  // the left edge goes on from the given corner
        if (i == 0) return t.top_corner;
        const long long v = static_cast<long long>(t.top_corner) + edge_value(t.left, i, open, extend);
        return v < kNeg ? kNeg : static_cast<int>(v);
    }
    if (i == 0) return t.corner_open ? 0 : kNeg;
    return edge_value(t.left, i, open, extend);
}
__device__ __forceinline__ int top_at(const LongTask& t, long long j, int open, int extend) {
    if (j == 0) return t.corner_open ? 0 : kNeg;
    return edge_value(t.top, j, open, extend);
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long v) {
    for (int d = 16; d > 0; d >>= 1) {
        const unsigned long long o = __shfl_xor_sync(kFull, v, d);
        v = o < v ? o : v;
    }
    return v;
}

// The per-warp query profile of this lane's rows: word [c][q][lane] holds
// the scores (+128, as bytes) of rows 4q..4q+3 against residue code c.
template <int R>
__device__ __forceinline__ void fill_query_profile(const LaunchParams& p, const LongTask& t, long long my_first,
                                                   int lane, unsigned* prof) {
    __syncwarp();
    int codes[R];
#pragma unroll
    for (int r = 0; r < R; ++r) codes[r] = (my_first + r <= t.m) ? t.rows[my_first + r - 1] : -1;
    for (int c = 0; c < p.alphabet; ++c) {
#pragma unroll
        for (int q = 0; q < R / 4; ++q) {
            unsigned w = 0;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const int code = codes[4 * q + b];
                const int s = code >= 0 ? p.profile_scores[code * p.alphabet + c] : -128;
                w |= static_cast<unsigned>(s + 128) << (8 * b);
            }
            prof[(c * (R / 4) + q) * 32 + lane] = w;
        }
    }
    __syncwarp();
}

// Column 0 of this lane's rows (H, E and H - open), from the task's explicit
// left edge or its edge kind; returns H of the row above (the first diagonal).
template <int R, bool Slice>
__device__ __forceinline__ int load_left_column(const LongTask& t, long long m, long long my_first, int my_rows, int go,
                                                int ge, int (&H)[R], int (&E)[R], int (&G)[R]) {
    int diag0;
    if (Slice && t.left == kEdgeExplicit) {  // column 0 given (left_h[0] is the corner)
        const std::int32_t* lh = t.left_h + my_first;
        const std::int32_t* le = t.left_e + my_first;
        diag0 = my_first - 1 <= m ? lh[-1] : kNeg;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            H[r] = r < my_rows ? lh[r] : kNeg;
            E[r] = r < my_rows ? le[r] : kNeg;
            G[r] = H[r] - go;
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            H[r] = (my_first + r <= m) ? left_at(t, my_first + r, go, ge) : kNeg;
            E[r] = kNeg;
            G[r] = H[r] - go;
        }
        diag0 = left_at(t, my_first - 1, go, ge);
    }
    return diag0;
}

// A streamed split: wait until the slice before has handed over this strip's
// rows of column 0 and the row above them (its flags for this strip and the
// one before, raised by another GPU's kernel). True when the launch is
// aborted meanwhile.
__device__ __forceinline__ bool wait_for_left_rows(const LaunchParams& p, const LongTask& t, int strip, int lane) {
    bool stop = false;
    if (lane == 0) {
        for (int s = strip > 0 ? strip - 1 : 0; s <= strip && !stop; ++s)
            while (ld_acquire_sys(t.left_ready + s) == 0) {
                if (*reinterpret_cast<const volatile int*>(p.abort)) {
                    stop = true;
                    break;
                }
                __nanosleep(256);
            }
    }
    stop = __shfl_sync(kFull, stop ? 1 : 0, 0) != 0;
    if (!stop) (void)ld_acquire_sys(t.left_ready + strip);
    return stop;
}

// The special row this strip's bottom row is saved to (null when none), its
// column 0 written by lane 0.
struct SpecialRow {
    std::int32_t* h = nullptr;
    std::int32_t* f = nullptr;
};
template <int SH, bool Slice>
__device__ __forceinline__ SpecialRow special_row_of(const LongTask& t, int strip, long long i0, int lane, int go,
                                                     int ge) {
    SpecialRow sp;
    if (t.special_h && t.special_every > 0 && (strip + 1) % t.special_every == 0 && i0 + SH < t.m) {
        const long long slot = (strip + 1) / t.special_every - 1;
        sp.h = t.special_h + slot * (t.n + 1);
        sp.f = t.special_f + slot * (t.n + 1);
        if (lane == 0 && Slice && t.left == kEdgeExplicit) {
            sp.h[0] = t.left_h[i0 + SH];
            sp.f[0] = t.left_f ? t.left_f[i0 + SH] : kNeg;  // a streamed column brings no F
        } else if (lane == 0) {
            const int v = left_at(t, i0 + SH, go, ge);
            sp.h[0] = v;
            sp.f[0] = (t.left == kEdgeGap || t.left == kEdgeGapContinue) ? v : kNeg;
        }
    }
    return sp;
}

// The overview block of this strip's rows, the column block being pooled
// (columns binned as in the pass this task is a slice of: offset, total), its
// running maximum and the column where the next column block starts.
struct OverviewBin {
    int row = 0, block = 0, max = kNeg, next = 0;
};
__device__ __forceinline__ OverviewBin first_overview_bin(const LongTask& t, int strip) {
    OverviewBin ov;
    ov.row = static_cast<int>(static_cast<long long>(strip) * t.ov_rows / t.strips);
    ov.block = static_cast<int>(t.ov_offset * t.ov_cols / t.ov_total);
    ov.next = static_cast<int>((static_cast<long long>(ov.block + 1) * t.ov_total + t.ov_cols - 1) / t.ov_cols -
                               t.ov_offset) +
              1;
    return ov;
}
// Column j's maximum `mx` into the bin, flushing the bin when j starts the next block.
__device__ __forceinline__ void pool_overview(const LongTask& t, OverviewBin& ov, int j, int mx) {
    if (j >= ov.next) {  // into the next column block
        atomicMax(t.overview + static_cast<long long>(ov.row) * t.ov_cols + ov.block, ov.max);
        ov.max = kNeg;
        ov.block = static_cast<int>((t.ov_offset + j - 1) * t.ov_cols / t.ov_total);
        // First column of block ov.block + 1: smallest j with (offset+j-1)*ov_cols/total >= ov.block + 1.
        ov.next = static_cast<int>(((ov.block + 1) * t.ov_total + t.ov_cols - 1) / t.ov_cols - t.ov_offset) + 1;
    }
    ov.max = max(ov.max, mx);
}

// At the start of each chunk of 32 columns: stop (cancel, or a goal search's
// hit far enough behind: returns true), else wait until the strip above has
// published the chunk and read it (lane k: column s + 1 + k's residue, H and
// F of the row above the strip).
__device__ __forceinline__ bool fetch_top_chunk(const LaunchParams& p, const LongTask& t, int s, int lane, int ni,
                                                const int* prev_progress, int& in_h, int& in_f, int& in_c) {
    bool stop = *reinterpret_cast<const volatile int*>(p.abort) != 0;
    if (t.hit && !stop) {
        const unsigned long long key = ld_volatile(t.hit);
        if (key != ~0ull && static_cast<long long>(key >> 34) + 32 <= s) stop = true;
    }
    if (stop) return true;
    if (prev_progress && s + 1 <= ni) {
        const int need = s + 32 < ni ? s + 32 : ni;
        if (lane == 0) {
            while (ld_acquire(prev_progress) < need) {
                if (*reinterpret_cast<const volatile int*>(p.abort)) break;
                __nanosleep(64);
            }
        }
        __syncwarp();
        (void)ld_acquire(prev_progress);
    }
    const int col = s + 1 + lane;
    if (col <= ni) {
        in_c = t.cols[col - 1];
        // Strip 0 of an explicit top edge reads row 0 from the bus, which
        // the host filled; it overwrites column j only after reading it.
        if (prev_progress || t.top == kEdgeExplicit) {
            in_h = t.bus_h[col];
            in_f = t.bus_f[col];
        } else {
            in_h = top_at(t, col, p.gap_open, p.gap_extend);
            in_f = kNeg;
        }
    }
    return false;
}

// A goal search's key for a bottom-row cell of the crossing strip at `col`:
// where the forward and reverse halves meet at the goal score (kind 1 in H,
// kind 2 in F), else ~0.
__device__ __forceinline__ unsigned long long crossing_key(const LongTask& t, int col, int out_h, int out_f, int go,
                                                           int ge) {
    const long long c = t.goal_col_end - col;
    long long fh, ff;
    if (t.goal_h) {
        fh = t.goal_h[c];
        ff = t.goal_f[c];
    } else {
        fh = c == 0 ? 0 : edge_value(t.goal_edge, c, go, ge);
        ff = kNeg;
    }
    const long long base = (static_cast<unsigned long long>(col) << 34) | (static_cast<unsigned long long>(t.m) << 2);
    if (fh > kNeg / 2 && out_h > kNeg / 2 && fh + out_h == t.goal) return base | 1;
    if (ff > kNeg / 2 && out_f > kNeg / 2 && ff + out_f + (go - ge) == t.goal) return base | 2;
    return ~0ull;
}

// A whole chunk of the strip's bottom row (columns jo - 31 .. jo, from the
// chunk's first column) goes to the bus, the special row and the crossing
// check, then the chunk is released to the strip below.
__device__ __forceinline__ void publish_bottom_chunk(const LongTask& t, int jo, int lane, int out_h, int out_f,
                                                     const SpecialRow& sp, bool crossing, int go, int ge,
                                                     int* my_progress) {
    const int col = jo - 31 + lane;
    const int lo = ((jo - 1) & ~31) + 1;
    unsigned long long key = ~0ull;
    if (col >= lo) {
        t.bus_h[col] = out_h;
        t.bus_f[col] = out_f;
        if (sp.h) {
            sp.h[col] = out_h;
            sp.f[col] = out_f;
        }
        if (crossing) key = crossing_key(t, col, out_h, out_f, go, ge);
    }
    if (crossing && __any_sync(kFull, key != ~0ull)) {
        key = warp_min(key);
        if (lane == 0) atomicMin(t.hit, key);
    }
    __threadfence();
    __syncwarp();
    if (lane == 0) st_release(my_progress, jo);
}

// The last column's H and E of this lane's rows (what the next slice of a
// split pass takes as its left edge).
template <int R>
__device__ __forceinline__ void store_last_column_state(std::int32_t* last_col, long long m, long long my_first,
                                                        int my_rows, const int (&H)[R], const int (&E)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (r < my_rows) {
            last_col[my_first + r] = H[r];
            last_col[m + 1 + my_first + r] = E[r];
        }
}

// The bottom-row cell lane `from` just computed joins the chunk being
// gathered for the bus: the lanes shift down one, lane 31 takes it.
__device__ __forceinline__ void shift_in_bottom_cell(int h, int f, int from, int lane, int& out_h, int& out_f) {
    const int v_h = __shfl_sync(kFull, h, from);
    const int v_f = __shfl_sync(kFull, f, from);
    out_h = __shfl_down_sync(kFull, out_h, 1);
    out_f = __shfl_down_sync(kFull, out_f, 1);
    if (lane == 31) {
        out_h = v_h;
        out_f = v_f;
    }
}

// The row above this lane's rows at this step (H, F and the column's
// residue): lane 0's from the chunk read (lane k of it), the others' from the
// bottom row of the lane above.
__device__ __forceinline__ void receive_from_above(int in_h, int in_f, int in_c, int k, int bot_h, int bot_f, int lane,
                                                   int& a_h, int& a_f, int& c_cur) {
    const int tk_h = __shfl_sync(kFull, in_h, k);
    const int tk_f = __shfl_sync(kFull, in_f, k);
    const int tk_c = __shfl_sync(kFull, in_c, k);
    using Warp = wavefront::WavefrontGroup<32>;  // one strip a warp
    a_h = Warp::from_above(kFull, bot_h);
    a_f = Warp::from_above(kFull, bot_f);
    int a_c = Warp::from_above(kFull, c_cur);
    if (lane == 0) {
        a_h = tk_h;
        a_f = tk_f;
        a_c = tk_c;
    }
    c_cur = a_c;
}

// H of the last column, rows 1..m of this lane (the kernels without the slice extras).
template <int R>
__device__ __forceinline__ void store_last_column(std::int32_t* last_col, long long m, long long my_first,
                                                  const int (&H)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (my_first + r <= m) last_col[my_first + r] = H[r];
}

// A streamed split: this strip's rows of the last column are written (by
// every lane); the flag tells the next slice's kernel, maybe on another GPU.
__device__ __forceinline__ void raise_right_flag(int* right_ready, int strip, int lane) {
    if (!right_ready) return;
    __threadfence_system();
    __syncwarp();
    if (lane == 0) st_release_sys(right_ready + strip, 1);
}

// The strip's best cell (warp reduction: highest score, then smallest j,
// then smallest i) to its ticket's slot.
__device__ __forceinline__ void store_strip_best(const LaunchParams& p, int ticket, int lane, int best, int best_i,
                                                 int best_j) {
    for (int d = 16; d > 0; d >>= 1) {
        const int ob = __shfl_xor_sync(kFull, best, d);
        const int oi = __shfl_xor_sync(kFull, best_i, d);
        const int oj = __shfl_xor_sync(kFull, best_j, d);
        if (ob > best || (ob == best && (oj < best_j || (oj == best_j && oi < best_i)))) {
            best = ob;
            best_i = oi;
            best_j = oj;
        }
    }
    if (lane == 0) p.best[ticket] = StripBest{best, 0, best_i, best_j};
}

// One strip swept across all columns of its task.
// Slice: the launch has a task with an explicit left edge (H and E of column 0
// given) or one that wants the state of its last column (H and E, what the next
// slice of a split pass takes as its left edge); the other kernels have neither
// (and store only H of a last column, as they always did).
template <int R, bool Local, bool Overview, bool Slice, bool Partial>
__device__ void run_strip(const LaunchParams& p, const LongTask& t, int task, int strip, int ticket, int lane,
                          unsigned* prof) {
    constexpr int SH = 32 * R;
    const int go = p.gap_open, ge = p.gap_extend;
    const long long m = t.m, n = t.n;
    const long long i0 = static_cast<long long>(strip) * SH;
    const int rows_here = static_cast<int>(m - i0 < SH ? m - i0 : SH);
    const long long my_first = i0 + static_cast<long long>(lane) * R + 1;
    const int my_rows = rows_here - lane * R;  // valid rows of this lane (may be <= 0 or > R)
    const int last_lane = (rows_here - 1) / R;
    const int last_r = (rows_here - 1) % R;

    fill_query_profile<R>(p, t, my_first, lane, prof);
    if (Slice && t.left_ready && wait_for_left_rows(p, t, strip, lane)) {
        __syncwarp();
        if (lane == 0) st_release(p.progress + ticket, 0x7fffffff);
        return;
    }
    int H[R], E[R], G[R];
    int diag0 = load_left_column<R, Slice>(t, m, my_first, my_rows, go, ge, H, E, G);
    const SpecialRow sp = special_row_of<SH, Slice>(t, strip, i0, lane, go, ge);
    const bool crossing = t.goal_search && t.hit && strip == t.strips - 1;
    const bool track = t.track_best || t.goal_any || Overview;
    OverviewBin ov;
    if (Overview) ov = first_overview_bin(t, strip);
    int best = t.goal_any ? t.goal - 1 : 0;
    int best_i = 0, best_j = 0;

    int c_cur = 0, bot_h = kNeg, bot_f = kNeg, sel_h = kNeg, sel_f = kNeg;
    int in_h = kNeg, in_f = kNeg, in_c = 0, out_h = kNeg, out_f = kNeg;
    const int L = Partial ? last_lane : 31;
    int* my_progress = p.progress + ticket;
    const int* prev_progress = strip > 0 ? p.progress + ticket - 1 : nullptr;
    const int steps = static_cast<int>(n) + 31;
    const int ni = static_cast<int>(n);

    for (int s = 0; s < steps; ++s) {
        const int k = static_cast<int>(s & 31);
        if (k == 0 && fetch_top_chunk(p, t, s, lane, ni, prev_progress, in_h, in_f, in_c)) {
            __syncwarp();
            if (lane == 0) st_release(my_progress, 0x7fffffff);
            return;
        }
        int a_h, a_f;
        receive_from_above(in_h, in_f, in_c, k, bot_h, bot_f, lane, a_h, a_f, c_cur);
        const int j = s - lane + 1;
        if (j >= 1 && j <= ni) {
            int diag = diag0;
            diag0 = a_h;
            const unsigned* pw = prof + c_cur * (R / 4) * 32 + lane;
            int hup_g = a_h - go;
            int f = a_f;
            int mx = kNeg;
#pragma unroll
            for (int q = 0; q < R / 4; ++q) {
                const unsigned w = pw[q * 32];
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int r = 4 * q + b;
                    const int sc = static_cast<int>(__byte_perm(w, 0u, 0x4440u + static_cast<unsigned>(b)));
                    const int d = diag + sc - 128;
                    const int e = Cell::add_max(E[r], -ge, G[r]);
                    f = Cell::add_max(f, -ge, hup_g);
                    const int h = Local ? Cell::max3_relu(d, e, f) : Cell::max3(d, e, f);
                    diag = H[r];
                    H[r] = h;
                    E[r] = e;
                    G[r] = h - go;
                    hup_g = G[r];
                    if (Partial) {
                        if (r == last_r) {
                            sel_h = h;
                            sel_f = f;
                        }
                        if (track && r < my_rows) mx = max(mx, h);
                    } else if (track) {
                        mx = max(mx, h);
                    }
                }
            }
            bot_h = H[R - 1];
            bot_f = f;
            if (Overview) pool_overview(t, ov, j, mx);
            if ((t.track_best || t.goal_any) && mx > best) {
                int rr = 0;
#pragma unroll
                for (int r = R - 1; r >= 0; --r)
                    if (H[r] == mx) rr = r;
                best = mx;
                best_i = static_cast<int>(my_first) + rr;
                best_j = j;
                if (t.goal_any && t.hit)
                    atomicMin(t.hit, (static_cast<unsigned long long>(j) << 34) |
                                         (static_cast<unsigned long long>(best_i) << 2));
            }
            // Column n: its H (and in the slice kernels E) to the last column.
            if (t.last_col && j == ni) {
                if (Slice) store_last_column_state<R>(t.last_col, m, my_first, my_rows, H, E);
                else
                    store_last_column<R>(t.last_col, m, my_first, H);
            }
        }
        // The strip's bottom row (row m in a partial strip) for lane L's column.
        shift_in_bottom_cell(Partial ? sel_h : bot_h, Partial ? sel_f : bot_f, L, lane, out_h, out_f);
        const int jo = s - L + 1;  // lane k now holds column jo - 31 + k
        if (jo >= 1 && jo <= ni && ((jo & 31) == 0 || jo == ni))
            publish_bottom_chunk(t, jo, lane, out_h, out_f, sp, crossing, go, ge, my_progress);
    }
    // (The flag's address is read again from the task list: kept in a
    // register across the cell loop it would spill.)
    if (Slice) raise_right_flag(reload_pointer(&p.tasks[task].right_ready), strip, lane);
    if (Overview && ov.max > kNeg)
        atomicMax(t.overview + static_cast<long long>(ov.row) * t.ov_cols + ov.block, ov.max);
    if (t.track_best) store_strip_best(p, ticket, lane, best, best_i, best_j);
    // All of the strip is written: n + 1 tells the host (a checkpoint may copy it now).
    __threadfence_system();
    __syncwarp();
    if (lane == 0) st_release(my_progress, ni + 1);
}

// Block size and blocks per SM: StripPolicy (long_types.hpp).
template <int R, bool Local, bool Overview, bool Slice>
__global__ void __launch_bounds__(StripPolicy::block_threads, StripPolicy::min_blocks_per_sm(R, Overview, Slice))
    strip_kernel(LaunchParams p) {
    extern __shared__ unsigned shared_profile[];
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    unsigned* prof = shared_profile + static_cast<long long>(warp) * p.alphabet * (R / 4) * 32;
    for (;;) {
        int ticket = 0;
        if (lane == 0) ticket = atomicAdd(p.ticket, 1);
        ticket = __shfl_sync(kFull, ticket, 0);
        if (ticket >= p.total_strips) return;
        int lo = 0, hi = p.task_count - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (p.tasks[mid].first_ticket <= ticket) lo = mid;
            else
                hi = mid - 1;
        }
        const LongTask t = p.tasks[lo];
        const int strip = ticket - t.first_ticket;
        if (t.m - static_cast<long long>(strip) * 32 * R >= 32 * R)
            run_strip<R, Local, Overview, Slice, false>(p, t, lo, strip, ticket, lane, prof);
        else
            run_strip<R, Local, Overview, Slice, true>(p, t, lo, strip, ticket, lane, prof);
    }
}

}  // namespace alignscope::kernels::longpass::device
