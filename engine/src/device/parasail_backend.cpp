// Backend "cpu": parasail's SIMD aligners (striped and prefix-scan, runtime-
// dispatched to the best instruction set) threaded over pairs, giving exactly
// the reference's score and coordinates.
//
// How the reference's answer is reproduced (see reference_aligner.hpp):
//  - parasail runs with s1 = query (the profile) and s2 = target. Its
//    Smith-Waterman reports the end cell with the smallest target position,
//    and within it the smallest query position: the reference's tie-break.
//  - Families, from measurements on 300x300 protein pairs: striped is the
//    fastest Smith-Waterman on unrelated pairs (5.8 GCUPS in 8-bit lanes vs
//    3.3 for scan), scan on similar ones (2.7 vs 2.0 in 16-bit lanes), and a
//    pair that overflows 8-bit lanes is a similar one: so striped in 8-bit
//    lanes, scan in wider ones. Scan for global and semi-global (3.6 vs 2.0)
//    and for the traceback (2.3 vs 0.8). parasail 2.6's striped kernels get
//    wrong scores when open == extend (the lazy-F loop stops early), so linear
//    gaps use scan throughout.
//  - Semi-global ends are chosen here from the last row and column that the
//    rowcol variants return, with the reference's tie-break, so only the free
//    beginnings select a parasail function (nw, sg_qb, sg_db, sg_qb_db).
//  - The begin cell comes from a reverse pass over the reversed prefixes that
//    end at the end cell, with the same rule (like ADEPT and the reference).
//    A job that wants no begins (AlignOptions::begins false, no traceback)
//    skips that pass and reports them 0, as the GPU does.
//  - With traceback, the region between begin and end is aligned globally by
//    parasail's nw_trace (scan); its score must equal the forward score.
// Lane width starts at the narrowest that takes the scheme's scores and
// penalties and holds the pair's values (lane_bounds.hpp), widens to 32 bits
// whenever parasail reports saturation, and past 32 bits goes to linear space
// in 64-bit arithmetic. A job may force one family and width
// (PairJob::kernel, e.g. "sg_affine_striped_s16"); it then fails rather than
// widen.
#include "cpu_backends.hpp"
#include "parasail_support.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/linear_space.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/lane_bounds.hpp>

#include <parasail.h>
#include <parasail/cpuid.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ALIGNSCOPE_PROFILE8_AVX2 1
#endif

namespace alignscope {
namespace {

using parasail_support::MatrixPtr;
using parasail_support::ProfilePtr;
using parasail_support::ResultPtr;

// Above pass_cell_limit a pair runs in linear space instead: parasail cannot
// be interrupted inside a pass and a job must honour a cancel within 100 ms;
// 2^26 cells take parasail about 50 ms at its slowest here (32-bit scan, ~1.2
// GCUPS on a busy core). Above trace_cell_limit the aligned region is traced by
// Myers-Miller: parasail's trace table takes a byte per cell (64 MB a worker).
constexpr std::uint64_t pass_cell_limit = 1ull << 26;
constexpr std::uint64_t trace_cell_limit = 1ull << 26;
// Diagonals on each side of the main one that diagonal_segment_reaches scans.
constexpr std::ptrdiff_t neighbour_diagonals = 8;

using ProfileFunction = parasail_result_t* (*)(const parasail_profile_t*, const char*, int, int, int);
using TraceFunction = parasail_result_t* (*)(const char*, int, const char*, int, int, int, const parasail_matrix_t*);
using ProfileCreator = parasail_profile_t* (*)(const char*, int, const parasail_matrix_t*);

// Indexed by lane width: 0 = 8 bits, 1 = 16, 2 = 32.
constexpr int width_bits[3] = {8, 16, 32};
constexpr int kNoLane = 3;  // no lane width holds the problem: 64-bit linear space
// Scores a pass of `bits` lanes is trusted to reach (lane_bounds.hpp's margin).
constexpr std::int64_t lane_room(int bits) { return (std::int64_t{1} << (bits - 1)) / 4 * 3; }
constexpr ProfileCreator profile_create[3] = {parasail_profile_create_8, parasail_profile_create_16,
                                              parasail_profile_create_32};
// Indexed by family (0 = striped, 1 = scan), then lane width.
enum Family { striped = 0, scan = 1 };
constexpr const char* family_names[2] = {"striped", "scan"};
constexpr ProfileFunction sw_kernels[2][3] = {{parasail_sw_striped_profile_8, parasail_sw_striped_profile_16,
                                               parasail_sw_striped_profile_32},
                                              {parasail_sw_scan_profile_8, parasail_sw_scan_profile_16,
                                               parasail_sw_scan_profile_32}};
constexpr ProfileFunction nw_kernels[2][3] = {{parasail_nw_striped_profile_8, parasail_nw_striped_profile_16,
                                               parasail_nw_striped_profile_32},
                                              {parasail_nw_scan_profile_8, parasail_nw_scan_profile_16,
                                               parasail_nw_scan_profile_32}};
// Last row and column of the DP for each combination of free beginnings,
// indexed by family, then (query_begin ? 1 : 0) + (target_begin ? 2 : 0), then
// width. With s1 = query, parasail's "db" (free s2 residues before s1 begins)
// is our query_begin and "qb" our target_begin.
constexpr ProfileFunction rowcol_kernels[2][4][3] = {
    {{parasail_nw_rowcol_striped_profile_8, parasail_nw_rowcol_striped_profile_16,
      parasail_nw_rowcol_striped_profile_32},
     {parasail_sg_db_rowcol_striped_profile_8, parasail_sg_db_rowcol_striped_profile_16,
      parasail_sg_db_rowcol_striped_profile_32},
     {parasail_sg_qb_rowcol_striped_profile_8, parasail_sg_qb_rowcol_striped_profile_16,
      parasail_sg_qb_rowcol_striped_profile_32},
     {parasail_sg_qb_db_rowcol_striped_profile_8, parasail_sg_qb_db_rowcol_striped_profile_16,
      parasail_sg_qb_db_rowcol_striped_profile_32}},
    {{parasail_nw_rowcol_scan_profile_8, parasail_nw_rowcol_scan_profile_16, parasail_nw_rowcol_scan_profile_32},
     {parasail_sg_db_rowcol_scan_profile_8, parasail_sg_db_rowcol_scan_profile_16,
      parasail_sg_db_rowcol_scan_profile_32},
     {parasail_sg_qb_rowcol_scan_profile_8, parasail_sg_qb_rowcol_scan_profile_16,
      parasail_sg_qb_rowcol_scan_profile_32},
     {parasail_sg_qb_db_rowcol_scan_profile_8, parasail_sg_qb_db_rowcol_scan_profile_16,
      parasail_sg_qb_db_rowcol_scan_profile_32}}};
// The kernels a job may force with --kernel, after "mode_gaps_".
const std::vector<ForcedKernel> forcible_kernels = {{"striped", KernelWidth::S8},  {"striped", KernelWidth::S16},
                                                    {"striped", KernelWidth::S32}, {"scan", KernelWidth::S8},
                                                    {"scan", KernelWidth::S16},    {"scan", KernelWidth::S32}};
constexpr KernelWidth lane_widths[3] = {KernelWidth::S8, KernelWidth::S16, KernelWidth::S32};
constexpr TraceFunction nw_trace_scan[3] = {parasail_nw_trace_scan_8, parasail_nw_trace_scan_16,
                                            parasail_nw_trace_scan_32};

// 8- and 16-bit query profiles for parasail's 256-bit (AVX2) kernels, built
// with byte shuffles instead of parasail_profile_create_8/16's element-by-
// element loop (on 300-residue protein queries that loop cost half as much as
// the 8-bit alignment itself). The layout is parasail's striped one: for each
// matrix row k and segment i, 32 (8-bit) or 16 (16-bit) lanes holding
// score(k, query[lane * segLen + i]), 0 past the query's end. Each worker
// checks its first profile of each width against parasail's own, byte for
// byte, and uses parasail's from then on if they ever differ.
class ProfileBuilder {
public:
    ProfileBuilder(const parasail_matrix_t* matrix, int bits) : matrix_(matrix), lanes_(bits == 8 ? 32 : 16) {
#ifdef ALIGNSCOPE_PROFILE8_AVX2
        usable_ = parasail_can_use_avx2() && matrix->type == PARASAIL_MATRIX_TYPE_SQUARE && matrix->size >= 1 &&
                  matrix->size <= 32 && matrix->min >= INT8_MIN && matrix->max <= INT8_MAX;
#endif
        if (!usable_) return;
        const int n = matrix->size;
        code_of_.fill(unused_lane);
        for (int c = 0; c < n; ++c)
            code_of_[static_cast<unsigned char>(parasail_support::letters[c])] = static_cast<std::uint8_t>(c);
        rows_.assign(static_cast<std::size_t>(n), Vector{});
        for (int k = 0; k < n; ++k)
            for (int c = 0; c < n; ++c)
                rows_[k].bytes[c] = static_cast<std::uint8_t>(static_cast<std::int8_t>(matrix->matrix[k * n + c]));
    }

    bool usable() const { return usable_; }

    // The profile of `s1` (parasail letters of this matrix), valid while this
    // builder and `s1` live and until the next build. `verify` compares it
    // with parasail's own; on any difference the builder stops being usable
    // and the caller falls back to parasail's.
    const parasail_profile_t* build(const std::string& s1, bool verify) {
        const int s1_len = static_cast<int>(s1.size());
        const int seg_len = (s1_len + lanes_ - 1) / lanes_;
        const int n = matrix_->size;
        striped_.resize(static_cast<std::size_t>(seg_len));
        for (int i = 0; i < seg_len; ++i)
            for (int lane = 0; lane < lanes_; ++lane) {
                const int j = lane * seg_len + i;
                striped_[i].bytes[lane] = j < s1_len ? code_of_[static_cast<unsigned char>(s1[j])] : unused_lane;
            }
        scores_.resize(static_cast<std::size_t>(n) * seg_len);
#ifdef ALIGNSCOPE_PROFILE8_AVX2
        if (lanes_ == 32) fill8(striped_.data(), seg_len, rows_.data(), n, scores_.data());
        else
            fill16(striped_.data(), seg_len, rows_.data(), n, scores_.data());
#endif
        std::memset(&profile_, 0, sizeof profile_);
        profile_.s1 = s1.data();
        profile_.s1Len = s1_len;
        profile_.matrix = matrix_;
        (lanes_ == 32 ? profile_.profile8 : profile_.profile16).score = scores_.data();
        profile_.stop = INT32_MAX;
        if (verify) {
            ProfilePtr reference(
                (lanes_ == 32 ? parasail_profile_create_8 : parasail_profile_create_16)(s1.data(), s1_len, matrix_));
            if (!reference) throw Error("parasail could not build a query profile");
            const void* theirs = (lanes_ == 32 ? reference->profile8 : reference->profile16).score;
            if (reference->s1Len != s1_len || !theirs ||
                std::memcmp(theirs, scores_.data(), scores_.size() * sizeof(Vector)) != 0) {
                usable_ = false;
                return nullptr;
            }
        }
        return &profile_;
    }

private:
    struct alignas(32) Vector {
        std::uint8_t bytes[32] = {};
    };
    // A lane index that byte shuffles turn into 0 (high bit set).
    static constexpr std::uint8_t unused_lane = 0x80;

#ifdef ALIGNSCOPE_PROFILE8_AVX2
    // scores[k * seg_len + i] = row k looked up at the 32 codes of striped[i]:
    // two 16-entry shuffles (rows' low and high halves), chosen by bit 4.
    __attribute__((target("avx2"))) static void fill8(const Vector* striped, int seg_len, const Vector* rows, int n,
                                                      Vector* scores) {
        for (int k = 0; k < n; ++k) {
            const __m256i low =
                _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(rows[k].bytes)));
            const __m256i high =
                _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(rows[k].bytes + 16)));
            Vector* out = scores + static_cast<std::ptrdiff_t>(k) * seg_len;
            for (int i = 0; i < seg_len; ++i) {
                const __m256i codes = _mm256_load_si256(reinterpret_cast<const __m256i*>(striped[i].bytes));
                const __m256i v = _mm256_blendv_epi8(_mm256_shuffle_epi8(low, codes), _mm256_shuffle_epi8(high, codes),
                                                     _mm256_slli_epi16(codes, 3));
                _mm256_store_si256(reinterpret_cast<__m256i*>(out[i].bytes), v);
            }
        }
    }
    // The same lookup on 16 codes (the first half of striped[i]), widened to
    // 16-bit lanes.
    __attribute__((target("avx2"))) static void fill16(const Vector* striped, int seg_len, const Vector* rows, int n,
                                                       Vector* scores) {
        for (int k = 0; k < n; ++k) {
            const __m128i low = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[k].bytes));
            const __m128i high = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[k].bytes + 16));
            Vector* out = scores + static_cast<std::ptrdiff_t>(k) * seg_len;
            for (int i = 0; i < seg_len; ++i) {
                const __m128i codes = _mm_load_si128(reinterpret_cast<const __m128i*>(striped[i].bytes));
                const __m128i v = _mm_blendv_epi8(_mm_shuffle_epi8(low, codes), _mm_shuffle_epi8(high, codes),
                                                  _mm_slli_epi16(codes, 3));
                _mm256_store_si256(reinterpret_cast<__m256i*>(out[i].bytes), _mm256_cvtepi8_epi16(v));
            }
        }
    }
#endif

    const parasail_matrix_t* matrix_;
    int lanes_;  // 32 for 8-bit lanes, 16 for 16-bit ones
    bool usable_ = false;
    std::array<std::uint8_t, 256> code_of_{};
    std::vector<Vector> rows_, striped_, scores_;
    parasail_profile_t profile_{};
};

// One pass result: parasail's answer and the lane width it needed.
struct Pass {
    ResultPtr result;
    int width = 0;  // index into width_bits
};

// parasail 2.6's striped kernels give wrong scores when open == extend, and its
// 8-bit local scan kernel gives wrong, unflagged scores for long queries against
// short targets (e.g. 125 where the answer is 1 for a 2,276-residue query against
// one residue; found by `verify`, reproduced with parasail alone). So local
// alignment never runs scan in 8-bit lanes: affine gaps use striped there,
// linear gaps start at 16 bits.
void refuse_broken_parasail_kernels(const PairJob& job, const std::optional<ForcedKernel>& forced) {
    if (forced && forced->family == "striped" && job.scheme.linear())
        throw Error("--kernel '" + job.kernel +
                    "': parasail's striped kernels give wrong scores with linear gaps (open == extend); "
                    "use a scan kernel");
    if (forced && forced->family == "scan" && bits_of(forced->width) == 8 && job.options.mode == AlignmentMode::Local)
        throw Error("--kernel '" + job.kernel +
                    "': parasail's 8-bit local scan kernel gives wrong scores for long queries; "
                    "use striped_s8 or a wider scan kernel");
}

class ParasailPairAligner : public PairAligner {
public:
    ParasailPairAligner(const PairJob& job, const parasail_matrix_t* matrix)
        : job_(job),
          matrix_(matrix),
          forced_(forced_kernel(job, "cpu", forcible_kernels)),
          bounds_(SchemeBounds::of(job.scheme)),
          want_begins_(job.options.begins || job.options.traceback),
          built_{BuiltProfile{ProfileBuilder(matrix, 8)}, BuiltProfile{ProfileBuilder(matrix, 16)}} {
        // Residue byte -> parasail letter, 0 where the matrix has no row.
        for (int c = 0; c < 256; ++c) {
            const int index = job.scheme.matrix.index_of(static_cast<char>(c));
            letter_of_[c] = index < 0 ? '\0' : parasail_support::letters[static_cast<std::size_t>(index)];
        }
        // parasail letter -> matrix row.
        for (int c = 0; c < matrix->size; ++c)
            code_of_letter_[static_cast<unsigned char>(parasail_support::letters[static_cast<std::size_t>(c)])] =
                static_cast<std::uint8_t>(c);
        refuse_broken_parasail_kernels(job, forced_);
        if (forced_) {
            const Family f = forced_->family == "striped" ? striped : scan;
            for (int w = 0; w < 3; ++w) families_[w] = f;
            forced_width_ = bits_of(forced_->width) == 8 ? 0 : bits_of(forced_->width) == 16 ? 1 : 2;
        } else if (job.options.mode == AlignmentMode::Local) {
            // See refuse_broken_parasail_kernels and the file comment.
            if (job.scheme.linear()) min_width_ = 1;
            else
                families_[0] = striped;
        }
        // Lanes too narrow for the scheme's own scores and penalties are never
        // used, forced or not.
        while (min_width_ < 3 && !lane_takes_parameters(bounds_, width_bits[min_width_])) ++min_width_;
        // Named once, not for every pair.
        for (int f = 0; f < 2; ++f)
            for (int w = 0; w < 3; ++w)
                kernel_names_[f][w] = job_kernel(job, {family_names[f], lane_widths[w]}).format();
        if (forced_ && forced_width_ < min_width_)
            throw Error("--kernel '" + job.kernel + "': this scheme's scores and penalties (largest " +
                        std::to_string(bounds_.largest_parameter()) + ", scaled) do not fit its " +
                        std::to_string(bits_of(forced_->width)) +
                        "-bit lanes; force a wider kernel or let the backend choose");
    }

    Alignment align(const Sequence& query, const Sequence& target, PairProgress& progress) override {
        const std::int64_t m = static_cast<std::int64_t>(query.residues.size());
        const std::int64_t n = static_cast<std::int64_t>(target.residues.size());
        if (m == 0) throw Error("query '" + query.id + "' is empty");
        if (n == 0) throw Error("target '" + target.id + "' is empty");
        const std::uint64_t cells = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n);
        // A forced kernel runs whatever the size: the user asked for it.
        if ((!forced_ && cells > pass_cell_limit) || m > INT_MAX / 4 || n > INT_MAX / 4)
            return linear_space(query, target, progress);

        to_letters(query, "query", q_);
        to_letters(target, "target", t_);

        Alignment a;
        a.mode = job_.options.mode;
        a.query_length = m;
        a.target_length = n;
        int width = 0;
        bool ok = false;
        switch (job_.options.mode) {
            case AlignmentMode::Local: ok = local(a, width); break;
            case AlignmentMode::Global: ok = global(a, width); break;
            case AlignmentMode::SemiGlobal: ok = semiglobal(a, width); break;
        }
        if (!ok) return linear_space(query, target, progress);  // scores beyond 32 bits
        a.kernel = kernel_names_[families_[width]][width];
        progress.cells_done(cells);

        if (job_.options.traceback && a.query_end > 0) {
            const std::uint64_t region = static_cast<std::uint64_t>(a.query_end - a.query_begin + 1) *
                                         static_cast<std::uint64_t>(a.target_end - a.target_begin + 1);
            if (region > trace_cell_limit || !trace(a)) trace_in_linear_space(a, query, target, progress);
            complete_alignment(a, query.residues, target.residues, job_.scheme);
        }
        return a;
    }

private:
    // The residues as parasail letters, into a buffer the worker keeps. A
    // residue the matrix does not score gets encode()'s error.
    void to_letters(const Sequence& sequence, const char* what, std::string& out) const {
        const std::string& residues = sequence.residues;
        out.resize(residues.size());
        char missing = 1;
        for (std::size_t k = 0; k < residues.size(); ++k) {
            const char letter = letter_of_[static_cast<unsigned char>(residues[k])];
            out[k] = letter;
            missing &= static_cast<char>(letter != '\0');
        }
        if (!missing) encode(residues, job_.scheme.matrix, std::string(what) + " '" + sequence.id + "'");  // throws
    }

    // The best run of consecutive cells (i, i + d) on diagonal d without gaps
    // (Kadane): a lower bound on the local score, in min(m, n) steps without
    // branches.
    int diagonal_best_run(std::ptrdiff_t d) const {
        const auto m = static_cast<std::ptrdiff_t>(q_.size()), n = static_cast<std::ptrdiff_t>(t_.size());
        const int size = matrix_->size;
        const int* scores = matrix_->matrix;
        const auto* q = reinterpret_cast<const unsigned char*>(q_.data());
        const auto* t = reinterpret_cast<const unsigned char*>(t_.data());
        int run = 0, best = 0;
        for (std::ptrdiff_t i = std::max<std::ptrdiff_t>(0, -d), end = std::min(m, n - d); i < end; ++i) {
            run = std::max(0, run + scores[code_of_letter_[t[i + d]] * size + code_of_letter_[q[i]]]);
            best = std::max(best, run);
        }
        return best;
    }

    // Whether a run of cells without gaps on the main diagonal, or on one of
    // the diagonals beside it (where a related pair's alignment lies after a
    // few indels), scores `threshold` or more: then so does the local score.
    // The neighbours are looked at only when the main diagonal holds a run
    // that unrelated sequences seldom reach (on 50,000 pairs of real protein
    // windows: 2), so they cost nothing there.
    bool diagonal_segment_reaches(int threshold) const {
        const int main = diagonal_best_run(0);
        if (main >= threshold) return true;
        if (main < threshold / 4) return false;
        for (std::ptrdiff_t d = 1; d <= neighbour_diagonals; ++d)
            if (diagonal_best_run(d) >= threshold || diagonal_best_run(-d) >= threshold) return true;
        return false;
    }

    // A region too large for parasail's trace table (or beyond 32 bits) is
    // aligned globally by Myers-Miller, which reports progress as it goes.
    void trace_in_linear_space(Alignment& a, const Sequence& query, const Sequence& target, PairProgress& progress) {
        AlignOptions global;
        global.mode = AlignmentMode::Global;
        global.traceback = true;
        const std::string_view q = std::string_view(query.residues)
                                       .substr(static_cast<std::size_t>(a.query_begin - 1),
                                               static_cast<std::size_t>(a.query_end - a.query_begin + 1));
        const std::string_view t = std::string_view(target.residues)
                                       .substr(static_cast<std::size_t>(a.target_begin - 1),
                                               static_cast<std::size_t>(a.target_end - a.target_begin + 1));
        const Alignment region = align_linear_space(q, t, job_.scheme, global,
                                                    [&progress](std::uint64_t done) { progress.cells_done(done); });
        if (region.score != a.score) throw inconsistent("linear-space traceback", region.score, a.score);
        a.cigar = region.cigar;
    }

    Alignment linear_space(const Sequence& query, const Sequence& target, PairProgress& progress) {
        Alignment a = align_linear_space(query.residues, target.residues, job_.scheme, job_.options,
                                         [&progress](std::uint64_t done) { progress.cells_done(done); });
        a.kernel = job_kernel(job_, {"myersmiller", KernelWidth::S64}).format();
        return a;
    }

    // Whether a pass in lane width `w` can hold an m x n problem (lane_bounds.hpp).
    // A local striped pass needs only the scheme's parameters in its lanes:
    // it saturates instead of wrapping and parasail flags that, so run()
    // widens. Scan passes (global, semi-global, local with wider lanes or
    // linear gaps) add gap runs along a whole segment of the query without
    // saturating on the way (measured: 16-bit local scan with open = extend =
    // 5,000 returned 27,772 for a score of 5 on 98 x 46 residues), so every
    // value of the problem must fit. Scores beyond 32 bits fit no pass.
    bool pass_fits(int w, std::int64_t m, std::int64_t n, bool local) const {
        if (w < min_width_ || w >= kNoLane) return false;
        if (bounds_.highest_score(m, n) >= lane_room(32)) return false;
        if (local && families_[w] == striped) return true;
        return lane_holds_values(bounds_, m, n, width_bits[w]);
    }

    // The narrowest lane width that can hold the pass, or kNoLane: the
    // caller then aligns in 64-bit linear space.
    int first_width(std::int64_t m, std::int64_t n, bool local) const {
        for (int w = min_width_; w < kNoLane; ++w)
            if (pass_fits(w, m, n, local)) return w;
        return kNoLane;
    }

    // A query profile per lane width, kept while consecutive pairs share the
    // query (a database search). parasail keeps a pointer to the residues, so
    // the profile is built from a copy that lives as long as it does.
    const parasail_profile_t* profile_for(const std::string& s1, int width, bool cacheable) {
        if (width < 2 && built_[width].builder.usable()) {
            // The fast builder's single profile serves both the cached query
            // and scratch use; a cached one is rebuilt after a scratch one.
            BuiltProfile& b = built_[width];
            if (cacheable && b.holds == 1 && b.text == s1) return b.current;
            const std::string* text = &b.scratch_text;
            if (cacheable) {
                b.text = s1;
                text = &b.text;
            } else {
                b.scratch_text = s1;
            }
            const parasail_profile_t* p = b.builder.build(*text, !b.verified);
            if (p) {
                b.verified = true;
                b.current = p;
                b.holds = cacheable ? 1 : 2;
                return p;
            }
            b.holds = 0;  // differs from parasail's: parasail's from now on
        }
        if (!cacheable) {
            scratch_text_ = s1;
            scratch_profile_.reset(
                profile_create[width](scratch_text_.data(), static_cast<int>(scratch_text_.size()), matrix_));
            if (!scratch_profile_) throw Error("parasail could not build a query profile");
            return scratch_profile_.get();
        }
        if (profile_[width] && profile_text_[width] == s1) return profile_[width].get();
        profile_[width].reset();
        profile_text_[width] = s1;
        profile_[width].reset(
            profile_create[width](profile_text_[width].data(), static_cast<int>(profile_text_[width].size()), matrix_));
        if (!profile_[width]) throw Error("parasail could not build a query profile");
        return profile_[width].get();
    }

    // Runs a pass from lane width `width` upwards until it does not saturate,
    // each width in its family; a forced kernel runs in its width only.
    // `table` is indexed by family, then width.
    bool run(const ProfileFunction (&table)[2][3], const std::string& s1, const std::string& s2, int width,
             bool cacheable, Pass& pass) {
        const bool local = &table == &sw_kernels;
        const auto m = static_cast<std::int64_t>(s1.size()), n = static_cast<std::int64_t>(s2.size());
        if (forced_ && !pass_fits(forced_width_, m, n, local))
            throw Error("--kernel '" + job_.kernel + "': the values of this pair (" + std::to_string(m) + " x " +
                        std::to_string(n) + " residues under this scheme) do not fit its " +
                        std::to_string(bits_of(forced_->width)) +
                        "-bit lanes; force a wider kernel or let the backend choose");
        const int first = forced_ ? forced_width_ : width;
        const int last = forced_ ? forced_width_ : 2;
        for (int w = first; w <= last; ++w) {
            if (!pass_fits(w, m, n, local)) continue;
            const parasail_profile_t* profile = profile_for(s1, w, cacheable);
            ResultPtr r(table[families_[w]][w](profile, s2.data(), static_cast<int>(s2.size()), job_.scheme.gap_open,
                                               job_.scheme.gap_extend));
            if (!r) throw Error("parasail failed (out of memory?)");
            if (!parasail_result_is_saturated(r.get())) {
                pass.result = std::move(r);
                pass.width = w;
                return true;
            }
        }
        if (forced_)
            throw Error("--kernel '" + job_.kernel + "': the scores of this pair overflow its " +
                        std::to_string(bits_of(forced_->width)) +
                        "-bit lanes; force a wider kernel or let the backend choose");
        return false;
    }

    // Columns of a per-mode table, for run().
    template <std::size_t N>
    static auto& pick(const ProfileFunction (&table)[2][N][3], std::size_t k, ProfileFunction (&out)[2][3]) {
        for (int f = 0; f < 2; ++f)
            for (int w = 0; w < 3; ++w) out[f][w] = table[f][k][w];
        return out;
    }

    bool local(Alignment& a, int& width) {
        const std::int64_t m = a.query_length, n = a.target_length;
        Pass fwd;
        int first = first_width(m, n, true);
        // A pair whose main diagonal (or one beside it) alone holds a segment
        // scoring 256 or more saturates 8-bit lanes for sure, however parasail offsets them (its
        // 8-bit local kernels use a bias and reach scores past 127): the local
        // score is at least that. It starts at 16 bits rather than run twice,
        // in the lanes the 8-bit pass would have widened to.
        if (first == 0 && !forced_ && diagonal_segment_reaches(256)) first = 1;
        if (!run(sw_kernels, q_, t_, first, true, fwd)) return false;
        width = fwd.width;
        a.score = fwd.result->score;
        if (a.score <= 0) {
            a.score = 0;
            a.query_begin = a.query_end = a.target_begin = a.target_end = 0;
            return true;
        }
        a.query_end = fwd.result->end_query + 1;
        a.target_end = fwd.result->end_ref + 1;
        if (!want_begins_) return true;  // begins stay 0

        reverse_prefix(q_, a.query_end, rq_);
        reverse_prefix(t_, a.target_end, rt_);
        Pass rev;
        // The reverse pass's best score is the forward score (every local
        // alignment of the reversed prefixes is one of the pair), which the
        // forward pass's lanes held: it starts in that width, and run() still
        // widens should parasail flag saturation.
        const int rev_width = std::max(first_width(a.query_end, a.target_end, true), fwd.width);
        if (!run(sw_kernels, rq_, rt_, rev_width, false, rev)) return false;
        if (rev.result->score != a.score) throw inconsistent("reverse local pass", rev.result->score, a.score);
        // Reversed end (i', j'), 1-based, is the cell after the begin.
        a.query_begin = a.query_end - rev.result->end_query;
        a.target_begin = a.target_end - rev.result->end_ref;
        return true;
    }

    bool global(Alignment& a, int& width) {
        const std::int64_t m = a.query_length, n = a.target_length;
        Pass fwd;
        if (!run(nw_kernels, q_, t_, first_width(m, n, false), true, fwd)) return false;
        width = fwd.width;
        a.score = fwd.result->score;
        a.query_begin = a.target_begin = 1;
        a.query_end = m;
        a.target_end = n;
        return true;
    }

    // The reference's end rule over the last row and column: highest score,
    // then smallest target position j, then smallest query position i.
    // `last_row` is H(m, j) for j = 1..n, `last_col` H(i, n) for i = 1..m. With
    // `boundary_ends` (the reverse pass), the alignments made of gaps only on
    // one side, ending in (m, 0) or (0, n), are candidates too.
    struct End {
        std::int64_t score = 0, i = 0, j = 0;
    };
    End best_end(const int* last_row, const int* last_col, std::int64_t m, std::int64_t n, bool row_free, bool col_free,
                 bool boundary_ends) const {
        End best{last_row[n - 1], m, n};
        if (row_free) {
            const int* first_max = std::max_element(last_row, last_row + n);
            if (*first_max >= best.score) best = {*first_max, m, first_max - last_row + 1};
            const std::int64_t only_query_gaps = -job_.scheme.gap_cost(m);  // H(m, 0), column 0 not free
            if (boundary_ends && only_query_gaps >= best.score) best = {only_query_gaps, m, 0};
        }
        if (col_free) {
            const int* first_max = std::max_element(last_col, last_col + m);
            const std::int64_t i = first_max - last_col + 1;
            if (*first_max > best.score || (*first_max == best.score && best.j == n && i < best.i))
                best = {*first_max, i, n};
            const std::int64_t only_target_gaps = -job_.scheme.gap_cost(n);  // H(0, n), row 0 not free
            if (boundary_ends && (only_target_gaps > best.score || (only_target_gaps == best.score && best.j == n)))
                best = {only_target_gaps, 0, n};
        }
        return best;
    }

    bool semiglobal(Alignment& a, int& width) {
        const std::int64_t m = a.query_length, n = a.target_length;
        const FreeEndGaps& free = job_.options.free_ends;
        const int begins = (free.query_begin ? 1 : 0) + (free.target_begin ? 2 : 0);

        Pass fwd;
        ProfileFunction rowcol[2][3];
        if (!run(pick(rowcol_kernels, static_cast<std::size_t>(begins), rowcol), q_, t_, first_width(m, n, false), true,
                 fwd))
            return false;
        width = fwd.width;
        // s1 = query: parasail's "row" runs along s2 (the target) at the last
        // query position, our last row; its "column" is our last column.
        const End end =
            best_end(parasail_result_get_score_row(fwd.result.get()), parasail_result_get_score_col(fwd.result.get()),
                     m, n, free.query_end, free.target_end, false);
        a.score = end.score;
        a.query_end = end.i;
        a.target_end = end.j;
        a.query_begin = a.target_begin = 1;
        if (!free.query_begin && !free.target_begin) return true;  // begins at (0, 0)
        if (!want_begins_) {                                       // they would need the reverse pass: left 0
            a.query_begin = a.target_begin = 0;
            return true;
        }

        // Reverse pass: anchored at the end cell, free at the far end exactly
        // where the forward pass was free at its beginning.
        reverse_prefix(q_, a.query_end, rq_);
        reverse_prefix(t_, a.target_end, rt_);
        Pass rev;
        if (!run(pick(rowcol_kernels, 0, rowcol), rq_, rt_, first_width(a.query_end, a.target_end, false), false, rev))
            return false;
        const End start =
            best_end(parasail_result_get_score_row(rev.result.get()), parasail_result_get_score_col(rev.result.get()),
                     a.query_end, a.target_end, free.query_begin, free.target_begin, true);
        if (start.score != a.score) throw inconsistent("reverse semi-global pass", start.score, a.score);
        // A side the alignment does not consume begins at its end + 1.
        a.query_begin = a.query_end - start.i + 1;
        a.target_begin = a.target_end - start.j + 1;
        return true;
    }

    // Global alignment of the region [begin, end] by parasail's traceback.
    bool trace(Alignment& a) {
        const std::int64_t rows = a.query_end - a.query_begin + 1;
        const std::int64_t cols = a.target_end - a.target_begin + 1;
        if (rows == 0 || cols == 0) {  // gaps on one side only
            a.cigar = Cigar();
            a.cigar.push(rows == 0 ? 'D' : 'I', static_cast<std::uint32_t>(rows == 0 ? cols : rows));
            return true;
        }
        const std::string qr = q_.substr(static_cast<std::size_t>(a.query_begin - 1),
                                         static_cast<std::size_t>(a.query_end - a.query_begin + 1));
        const std::string tr = t_.substr(static_cast<std::size_t>(a.target_begin - 1),
                                         static_cast<std::size_t>(a.target_end - a.target_begin + 1));
        const int w0 = first_width(static_cast<std::int64_t>(qr.size()), static_cast<std::int64_t>(tr.size()), false);
        if (w0 == kNoLane) return false;
        for (int w = std::max(w0, 1); w < 3; ++w) {
            ResultPtr r(nw_trace_scan[w](qr.data(), static_cast<int>(qr.size()), tr.data(), static_cast<int>(tr.size()),
                                         job_.scheme.gap_open, job_.scheme.gap_extend, matrix_));
            if (!r) throw Error("parasail traceback failed (out of memory?)");
            if (parasail_result_is_saturated(r.get())) continue;
            if (r->score != a.score) throw inconsistent("traceback", r->score, a.score);
            parasail_support::CigarPtr c(parasail_result_get_cigar(r.get(), qr.data(), static_cast<int>(qr.size()),
                                                                   tr.data(), static_cast<int>(tr.size()), matrix_));
            if (!c) throw Error("parasail could not build the CIGAR");
            Cigar cigar;
            for (int k = 0; k < c->len; ++k) {
                const char op = parasail_cigar_decode_op(c->seq[k]);
                const std::uint32_t len = parasail_cigar_decode_len(c->seq[k]);
                // parasail, like SAM and us: 'I' consumes s1 (the query), 'D'
                // s2 (the target). '='/'X' are decided again against the
                // residues themselves by complete_alignment.
                switch (op) {
                    case '=':
                    case 'X':
                    case 'M': cigar.push('M', len); break;
                    case 'I': cigar.push('I', len); break;
                    case 'D': cigar.push('D', len); break;
                    default: throw Error(std::string("parasail returned an unknown CIGAR operation '") + op + "'");
                }
            }
            if (cigar.query_span() != static_cast<std::int64_t>(qr.size()) ||
                cigar.target_span() != static_cast<std::int64_t>(tr.size()))
                throw Error("parasail's traceback does not span the aligned region");
            a.cigar = std::move(cigar);
            return true;
        }
        return false;
    }

    static void reverse_prefix(const std::string& s, std::int64_t length, std::string& out) {
        out.assign(s.begin(), s.begin() + length);
        std::reverse(out.begin(), out.end());
    }

    Error inconsistent(const char* pass, std::int64_t got, std::int64_t expected) const {
        return Error(std::string("parasail's ") + pass + " scored " + std::to_string(got) +
                     " where the forward pass scored " + std::to_string(expected) +
                     " (internal error in the cpu backend)");
    }

    const PairJob& job_;
    const parasail_matrix_t* matrix_;
    std::optional<ForcedKernel> forced_;
    int forced_width_ = 0;
    Family families_[3] = {scan, scan, scan};  // the family each lane width runs in
    std::string kernel_names_[2][3];           // by family, then lane width
    int min_width_ = 0;                        // narrowest lane width any pass may use
    SchemeBounds bounds_;
    bool want_begins_;  // false: no reverse pass, begins reported 0
    char letter_of_[256];
    std::uint8_t code_of_letter_[256] = {};
    std::string q_, t_, rq_, rt_;
    ProfilePtr profile_[3];
    std::string profile_text_[3];
    std::string scratch_text_;
    ProfilePtr scratch_profile_;
    // Shuffle-built profiles, 8- and 16-bit lanes.
    struct BuiltProfile {
        explicit BuiltProfile(ProfileBuilder b) : builder(std::move(b)) {}
        ProfileBuilder builder;
        bool verified = false;
        int holds = 0;  // what builder last built: 0 nothing, 1 the cached query, 2 a scratch text
        std::string text, scratch_text;
        const parasail_profile_t* current = nullptr;
    };
    BuiltProfile built_[2];
};

class ParasailBackend : public Backend {
public:
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = "cpu";
        d.kind = "cpu";
        d.name = "CPU SIMD (parasail)";
        d.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        int major = 0, minor = 0, patch = 0;
        parasail_version(&major, &minor, &patch);
        d.description = "parasail " + std::to_string(major) + "." + std::to_string(minor) + "." +
                        std::to_string(patch) + " striped/scan, " + parasail_support::simd_level() +
                        ", 8/16/32-bit lanes, " + std::to_string(d.threads) + " threads";
        return d;
    }

    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        // A wrong --kernel fails before any work.
        refuse_broken_parasail_kernels(job, forced_kernel(job, "cpu", forcible_kernels));
        MatrixPtr matrix = parasail_support::make_matrix(job.scheme.matrix);
        const parasail_matrix_t* shared = matrix.get();  // read-only from every worker
        return align_pairs_on_workers(job, context, "cpu",
                                      [&job, shared] { return std::make_unique<ParasailPairAligner>(job, shared); });
    }

    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        refuse_broken_parasail_kernels(job, forced_kernel(job, "cpu", forcible_kernels));
        MatrixPtr matrix = parasail_support::make_matrix(job.scheme.matrix);
        const parasail_matrix_t* shared = matrix.get();
        align_pairs_on_workers(
            job, context, "cpu", [&job, shared] { return std::make_unique<ParasailPairAligner>(job, shared); },
            results);
    }
};

}  // namespace

std::unique_ptr<Backend> make_parasail_backend() { return std::make_unique<ParasailBackend>(); }

}  // namespace alignscope
