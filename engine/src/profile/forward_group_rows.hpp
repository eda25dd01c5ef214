// The grouped Forward/Backward rows of forward_pair.cpp for one register
// type, included once per instruction set with its register operations
// defined before: Reg (T targets of four lanes each), r_add, r_mul, r_zero,
// r_load, r_store, r_shift_up, r_shift_down (within each target's lanes),
// r_broadcast4 (one segment to every target), r_gather / r_scatter (target
// t's four floats at p[t] + off), r_splat (x[t] in target t's lanes), r_sums
// (each target's (t0 + t1) + (t2 + t3)), Mask, m_none, m_or_gt,
// m_target_bits (a bit per target with any lane set) and r_keep (zero the
// targets whose bit is clear). V<H> holds H registers: K = T * H targets.
// No include guard: forward_pair.cpp includes it once per instruction set,
// each time inside a namespace of its own.

template <int H>
struct V {
    Reg r[H];
};
// Whether every lane of every register is exactly zero (a NaN lane is not).
template <class R>
inline bool lanes_zero(R a) {
    if constexpr (sizeof(R) == 64) return _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_NEQ_UQ) == 0;
    else
        return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_NEQ_UQ)) == 0;
}
template <int H>
inline bool all_zero(const V<H>& a) {
    bool zero = true;
    for (int h = 0; h < H; ++h) zero = zero && lanes_zero(a.r[h]);
    return zero;
}
template <int H>
inline V<H> operator+(V<H> a, V<H> b) {
    for (int h = 0; h < H; ++h) a.r[h] = r_add(a.r[h], b.r[h]);
    return a;
}
template <int H>
inline V<H> operator*(V<H> a, V<H> b) {
    for (int h = 0; h < H; ++h) a.r[h] = r_mul(a.r[h], b.r[h]);
    return a;
}
template <int H>
inline V<H> zero() {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = r_zero();
    return a;
}
template <int H>
inline V<H> splat(const float* x) {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = r_splat(x + h * T);
    return a;
}
template <int H>
inline V<H> shift_up(V<H> a) {
    for (int h = 0; h < H; ++h) a.r[h] = r_shift_up(a.r[h]);
    return a;
}
template <int H>
inline V<H> shift_down(V<H> a) {
    for (int h = 0; h < H; ++h) a.r[h] = r_shift_down(a.r[h]);
    return a;
}
template <int H>
inline void target_sums(V<H> a, float* s) {
    for (int h = 0; h < H; ++h) r_sums(a.r[h], s + h * T);
}

// The profile's striped arrays; a transition segment goes to every target of
// a register in one load, emissions per target.
struct GroupProfile {
    const float* base;
    int Q;
    template <int H>
    V<H> at(int array, int q) const {
        const Reg x = r_broadcast4(base + static_cast<std::size_t>((array * Q + q) * 4));
        V<H> a;
        for (int h = 0; h < H; ++h) a.r[h] = x;
        return a;
    }
    const float* match(int x) const { return base + static_cast<std::size_t>(((Match + x) * Q) * 4); }
};
template <int H>
inline V<H> emission(const float* const* e, int q) {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = r_gather(e + h * T, static_cast<std::size_t>(q) * 4);
    return a;
}

// Two rows of grouped M, I and D per worker thread: segment q of a row is
// 4K floats.
template <int H>
struct GroupRows {
    int Q;
    float* base;
    explicit GroupRows(int segments) : Q(segments) {
        thread_local std::vector<float> rows;
        const std::size_t n = static_cast<std::size_t>(Q) * 4 * T * H * 3 * 2;
        if (rows.size() < n) rows.resize(n);
        base = rows.data();
    }
    GroupRow row(int slot) const {
        const std::size_t w = static_cast<std::size_t>(Q) * 4 * T * H;
        float* r = base + static_cast<std::size_t>(slot & 1) * 3 * w;
        return {r, r + w, r + 2 * w};
    }
};
template <int H>
inline V<H> at(const float* row, int q) {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = r_load(row + static_cast<std::size_t>(q * H + h) * 4 * T);
    return a;
}
template <int H>
inline void put(float* row, int q, V<H> a) {
    for (int h = 0; h < H; ++h) r_store(row + static_cast<std::size_t>(q * H + h) * 4 * T, a.r[h]);
}

template <int H>
void scale_group_row(GroupRow r, int Q, const float* f) {
    bool all_one = true;
    for (int g = 0; g < T * H; ++g) all_one = all_one && f[g] == 1.0f;
    if (all_one) return;
    const V<H> fv = splat<H>(f);
    for (int q = 0; q < Q; ++q) {
        put(r.m, q, at<H>(r.m, q) * fv);
        put(r.d, q, at<H>(r.d, q) * fv);
        put(r.i, q, at<H>(r.i, q) * fv);
    }
}

// Each target's row of its matrix into the group's row, and back; without
// `deletes`, D stays behind (a full matrix's rows before the last one of a
// stage: nothing reads their D but the next row, from the group).
template <int H>
void pack_group_row(const MatrixRows& from, int Q, GroupRow to) {
    float* const out[3] = {to.m, to.i, to.d};
    float* const* in[3] = {from.m, from.i, from.d};
    for (int s = 0; s < 3; ++s)
        for (int q = 0; q < Q; ++q)
            for (int h = 0; h < H; ++h)
                r_store(out[s] + static_cast<std::size_t>(q * H + h) * 4 * T,
                        r_gather(in[s] + h * T, static_cast<std::size_t>(q) * 4));
}
template <int H>
void split_group_row(GroupRow from, int Q, const MatrixRows& to, bool deletes) {
    const float* const in[3] = {from.m, from.i, from.d};
    float* const* out[3] = {to.m, to.i, to.d};
    for (int s = 0; s < (deletes ? 3 : 2); ++s)
        for (int q = 0; q < Q; ++q)
            for (int h = 0; h < H; ++h)
                r_scatter(r_load(in[s] + static_cast<std::size_t>(q * H + h) * 4 * T), out[s] + h * T,
                          static_cast<std::size_t>(q) * 4);
}

// Forward's D->D passes; a target whose pass changed nothing (models of 100
// nodes or more) adds zeros from then on, as if it had stopped.
template <int H>
void forward_deletes_group(const GroupProfile& p, int M, V<H> dcv, float* d) {
    const int Q = p.Q;
    dcv = shift_up(dcv);
    put(d, 0, zero<H>());
    for (int q = 0; q < Q; ++q) {
        const V<H> sum = dcv + at<H>(d, q);
        put(d, q, sum);
        dcv = sum * p.at<H>(DD, q);
    }
    constexpr int all = (1 << T) - 1;
    int live[H];
    for (int h = 0; h < H; ++h) live[h] = all;
    for (int j = 1; j < 4; ++j) {
        dcv = shift_up(dcv);
        for (int h = 0; h < H; ++h)
            if (live[h] != all) dcv.r[h] = r_keep(dcv.r[h], live[h]);
        Mask changed[H];
        for (int h = 0; h < H; ++h) changed[h] = m_none();
        for (int q = 0; q < Q; ++q) {
            // Once every target's carried products are zero, every sum left adds +0.
            if (all_zero(dcv)) return;
            const V<H> old = at<H>(d, q);
            const V<H> sum = dcv + old;
            for (int h = 0; h < H; ++h) changed[h] = m_or_gt(changed[h], sum.r[h], old.r[h]);
            put(d, q, sum);
            dcv = dcv * p.at<H>(DD, q);
        }
        if (M < 100) continue;
        int any_live = 0;
        for (int h = 0; h < H; ++h) {
            live[h] &= m_target_bits(changed[h]);
            any_live |= live[h];
        }
        if (any_live == 0) break;
    }
}

template <int H>
void forward_row_group(const GroupProfile& p, int M, const float* const* e, V<H> xBv, GroupRow prev, GroupRow cur,
                       float* xE) {
    const int Q = p.Q;
    V<H> dcv = zero<H>(), xEv = zero<H>();
    V<H> mpv = shift_up(at<H>(prev.m, Q - 1));
    V<H> dpv = shift_up(at<H>(prev.d, Q - 1));
    V<H> ipv = shift_up(at<H>(prev.i, Q - 1));
    for (int q = 0; q < Q; ++q) {
        V<H> sv = xBv * p.at<H>(BM, q);
        sv = sv + mpv * p.at<H>(MM, q);
        sv = sv + ipv * p.at<H>(IM, q);
        sv = sv + dpv * p.at<H>(DM, q);
        sv = sv * emission<H>(e, q);
        xEv = xEv + sv;
        mpv = at<H>(prev.m, q);
        dpv = at<H>(prev.d, q);
        ipv = at<H>(prev.i, q);
        put(cur.m, q, sv);
        put(cur.d, q, dcv);
        dcv = sv * p.at<H>(MD, q);
        put(cur.i, q, mpv * p.at<H>(MI, q) + ipv * p.at<H>(II, q));
    }
    forward_deletes_group(p, M, dcv, cur.d);
    for (int q = 0; q < Q; ++q) xEv = at<H>(cur.d, q) + xEv;
    target_sums(xEv, xE);
}

// Backward's D->D passes (all four), then M->D, as backward_deletes().
template <int H>
void backward_deletes_group(const GroupProfile& p, V<H> first, V<H> xEv, bool add_end, GroupRow cur) {
    const int Q = p.Q;
    V<H> dpv = first, dcv = zero<H>();
    for (int q = Q - 1; q >= 0; --q) {
        dcv = dpv * p.at<H>(DD, q);
        dpv = add_end ? at<H>(cur.d, q) + (dcv + xEv) : at<H>(cur.d, q) + dcv;
        put(cur.d, q, dpv);
        if (add_end) put(cur.m, q, at<H>(cur.m, q) + xEv);
    }
    for (int j = 1; j < 4 && !all_zero(dcv); ++j) {
        dcv = shift_down(dcv);
        for (int q = Q - 1; q >= 0; --q) {
            if (all_zero(dcv)) break;  // products all zero from here on add +0
            dcv = dcv * p.at<H>(DD, q);
            put(cur.d, q, at<H>(cur.d, q) + dcv);
        }
    }
    dcv = shift_down(at<H>(cur.d, 0));
    for (int q = Q - 1; q >= 0; --q) {
        const V<H> d = at<H>(cur.d, q);
        put(cur.m, q, at<H>(cur.m, q) + dcv * p.at<H>(MD, q));
        dcv = d;
    }
}

// The M, I and D of a Backward row from the row below; each target's B sum
// into xB.
template <int H>
void backward_cells_group(const GroupProfile& p, const float* const* e, GroupRow next, GroupRow cur, float* xB) {
    const int Q = p.Q;
    V<H> tmmv = shift_down(p.at<H>(MM, 0)), timv = shift_down(p.at<H>(IM, 0)), tdmv = shift_down(p.at<H>(DM, 0));
    V<H> mpv = shift_down(at<H>(next.m, 0) * emission<H>(e, 0));
    V<H> xBv = zero<H>();
    for (int q = Q - 1; q >= 0; --q) {
        const V<H> ipv = at<H>(next.i, q);
        put(cur.i, q, (ipv * p.at<H>(II, q)) + (mpv * timv));
        put(cur.d, q, mpv * tdmv);
        const V<H> mcv = (ipv * p.at<H>(MI, q)) + (mpv * tmmv);
        mpv = at<H>(next.m, q) * emission<H>(e, q);
        put(cur.m, q, mcv);
        tdmv = p.at<H>(DM, q);
        timv = p.at<H>(IM, q);
        tmmv = p.at<H>(MM, q);
        xBv = xBv + mpv * p.at<H>(BM, q);
    }
    target_sums(xBv, xB);
}

template <int H>
MatrixRows matrix_rows(DpMatrix* const* dp, const int* rows) {
    MatrixRows r{};
    for (int g = 0; g < T * H; ++g) {
        const std::size_t o = dp[g]->row(rows[g]);
        r.m[g] = dp[g]->mmx.data() + o;
        r.i[g] = dp[g]->imx.data() + o;
        r.d[g] = dp[g]->dmx.data() + dp[g]->drow(rows[g]);
    }
    return r;
}

// Forward rows from..to of a stage's T * H targets (rows past a target's end
// are not asked for): the previous row from each target's matrix, every row
// to the matrices when `full`, else the last one.
template <int H>
void forward_stage(const ForwardProfile& om, const StageLanes& s, ForwardCarry* carry, int from, int to, bool full) {
    const GroupProfile p{om.striped.data(), om.segments};
    const int Q = p.Q;
    const GroupRows<H> rows(Q);
    int at_row[kGroupTargets];
    for (int g = 0; g < T * H; ++g) at_row[g] = from - 1;
    pack_group_row<H>(matrix_rows<H>(s.out, at_row), Q, rows.row(from - 1));
    for (int i = from; i <= to; ++i) {
        const GroupRow cur = rows.row(i);
        const float* e[kGroupTargets];
        float xB[kGroupTargets], xE[kGroupTargets], f[kGroupTargets];
        for (int g = 0; g < T * H; ++g) {
            e[g] = p.match(s.t[g]->dsq[i - 1]);
            xB[g] = carry[s.slot[g]].xB;
        }
        forward_row_group<H>(p, om.length, e, splat<H>(xB), rows.row(i - 1), cur, xE);
        for (int g = 0; g < T * H; ++g)
            f[g] = forward_specials(om, s.t[g]->length, xE[g], carry[s.slot[g]], *s.out[g], i);
        scale_group_row<H>(cur, Q, f);
        if (full || i == to) {
            for (int g = 0; g < T * H; ++g) at_row[g] = i;
            split_group_row<H>(cur, Q, matrix_rows<H>(s.out, at_row), i == to);
        }
    }
}

// Backward steps from..to (step t is row L - t of each target, rows 1 and
// up); the row below from each target's matrix, rows back as Forward's.
template <int H>
void backward_stage(const ForwardProfile& om, const StageLanes& s, BackwardCarry* carry, int from, int to, bool full) {
    const GroupProfile p{om.striped.data(), om.segments};
    const int Q = p.Q;
    const GroupRows<H> rows(Q);
    int at_row[kGroupTargets];
    for (int g = 0; g < T * H; ++g) at_row[g] = s.t[g]->L - from + 1;
    pack_group_row<H>(matrix_rows<H>(s.out, at_row), Q, rows.row(from - 1));
    for (int step = from; step <= to; ++step) {
        const GroupRow cur = rows.row(step);
        const float* e[kGroupTargets];
        float xB[kGroupTargets], xE[kGroupTargets], f[kGroupTargets];
        for (int g = 0; g < T * H; ++g) e[g] = p.match(s.t[g]->dsq[s.t[g]->L - step]);
        backward_cells_group<H>(p, e, rows.row(step - 1), cur, xB);
        for (int g = 0; g < T * H; ++g) {
            BackwardCarry& x = carry[s.slot[g]];
            backward_specials(xB[g], s.t[g]->length, om, x);
            xE[g] = x.xE;
        }
        const V<H> xEv = splat<H>(xE);
        backward_deletes_group<H>(p, shift_down(at<H>(cur.d, 0) + xEv), xEv, true, cur);
        for (int g = 0; g < T * H; ++g) {
            const int i = s.t[g]->L - step;
            f[g] = backward_scale(*s.t[g]->fwd, i, *s.out[g], carry[s.slot[g]]);
        }
        scale_group_row<H>(cur, Q, f);
        for (int g = 0; g < T * H; ++g) set_row_specials(*s.out[g], s.t[g]->L - step, carry[s.slot[g]]);
        if (full || step == to) {
            for (int g = 0; g < T * H; ++g) at_row[g] = s.t[g]->L - step;
            split_group_row<H>(cur, Q, matrix_rows<H>(s.out, at_row), step == to);
        }
    }
}
