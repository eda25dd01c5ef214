// The filter stage of a profile search as a batch over many targets: a
// ProfileFilterScanner holds the targets on its device and returns the MSV
// filter score of a model against every target, then the Viterbi filter
// scores of the targets the pipeline names. The engine registers the CPU
// scanner ("cpu", threads over targets, the scalar reference recurrences); a
// GPU scanner registers itself from kernels/ the same way, and must return the
// same scores bit for bit (HMMER's integer units make that possible). "cpu"
// runs the MSV and Viterbi filters striped over SSE2 registers, "cpu-ref" the
// scalar reference; both give identical scores. A GPU scanner may also run
// the parser Forward of the Viterbi filter's survivors (forward()) and the
// parser Backward of those past the Fwd filter (backward()).
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/profile/plan7_profile.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::profile {

// What the last msv() and viterbi() calls cost; kernel times are 0 on the CPU.
struct ProfileFilterStats {
    double msv_seconds = 0, msv_kernel_seconds = 0;  // whole call; device kernels alone
    double viterbi_seconds = 0, viterbi_kernel_seconds = 0;
    std::uint64_t msv_cells = 0, viterbi_cells = 0;          // model length x residues
    std::uint64_t msv_rescored = 0;                          // targets the SSV pass sent on to the full MSV kernel
    double forward_seconds = 0, forward_kernel_seconds = 0;  // the last forward() call
    std::uint64_t forward_cells = 0;
    double backward_seconds = 0, backward_kernel_seconds = 0;  // the last backward() call
    std::uint64_t backward_cells = 0;
    std::uint64_t target_slices = 0;  // a GPU's msv(): the slices the targets were scanned in (1: all resident)
    double envelope_seconds = 0, envelope_kernel_seconds = 0;  // the last rescore_envelopes() call
    std::uint64_t envelope_cells = 0;                          // model length x envelope residues
    std::uint64_t envelopes_on_cpu = 0;  // of those, redone on the CPU (a long traceback, no room)
};

// The parser Forward (the Fwd filter) of a list of targets on a device: per
// target its score and, for Backward and the domain stage, every row's special
// states as DpMatrix keeps them (E N J B C Scale).
struct ForwardScores {
    std::vector<float> scores;             // nats, scores[i] for the list's target i; NaN where forward_score_of throws
    std::vector<float> total_scale;        // the sum of the rows' log scale factors
    std::vector<std::uint64_t> first_row;  // target i's rows 0..L start at specials[first_row[i] * 6]
    std::vector<float> specials;
};

// Forward's score (nats) from the recurrence's last C and the rows' scale
// factors, for a target of length L; throws Error on NaN, underflow or
// overflow. Every Forward implementation ends in this, so the last float
// step is the same everywhere.
float forward_score_of(const LengthModel& length, float xC, float total_scale, int L);

// The parser Backward (multihit) of targets on a device, laid out as
// ForwardScores: per target its score and every row's specials as DpMatrix
// keeps them (E N J B C Scale; row 0 holds N and B, Scale the Forward's
// factor). That is all the domain stage reads of the pipeline's Backward
// matrix (load_device_backward()). An empty target's row 0 is all zeros.
struct BackwardScores {
    std::vector<float> scores;             // nats; NaN where backward_score_of throws
    std::vector<float> total_scale;        // the sum of the rows' log scale factors
    std::vector<std::uint64_t> first_row;  // target i's rows 0..L start at specials[first_row[i] * 6]
    std::vector<float> specials;
};

// Backward's score (nats) from row 0's N and the rows' scale factors, for a
// target of length L; throws Error on NaN, underflow or overflow, as
// backward() does.
float backward_score_of(float xN, float total_scale, int L);

struct DpMatrix;
// Target i of `device` into a parser Backward matrix for the domain stage
// (a model of M nodes, a target of L residues): every row's specials and
// the total scale; the two rows of cells are sized, not filled (the domain
// stage reads none of them).
void load_device_backward(const BackwardScores& device, std::size_t i, int M, int L, DpMatrix& bck);
// Whether a device's Backward rows `bck` (the Forward's scale factors on
// every row, as the device keeps them) may differ from the CPU's: hmmsearch's
// takes factors of its own from the row where B passes 1e16 (DpMatrix::
// own_scales). True for any row whose B before its division comes within
// 0.1 % of that, or is not a number; such a target's Backward is the CPU's.
bool device_backward_needs_cpu(const DpMatrix& fwd, const DpMatrix& bck);

// One envelope of the domain stage to rescore on a device: the loaded
// target (its index), the envelope i..j on it (1-based, inclusive) and
// whether null2 is wanted from its posteriors (envelope_rescore.hpp says
// what comes back).
struct EnvelopeJob {
    std::uint32_t target = 0;
    int i = 0, j = 0;
    bool null2 = false;
};
struct EnvelopeOutcome;  // envelope_rescore.hpp

class ProfileFilterScanner {
public:
    virtual ~ProfileFilterScanner() = default;
    virtual DeviceInfo info() const = 0;

    // The device memory the scanner may take, in bytes (0: its default; a GPU
    // scanner takes 90 % of the device's free memory). Call before load(). A
    // GPU scanner whose targets do not fit loads and scans them a slice at a
    // time, with the same scores; the CPU scanners ignore it.
    virtual void set_memory_budget(std::uint64_t /*bytes*/) {}

    // Takes the targets for the following calls (they must outlive them).
    virtual void load(const ProfileTargets& targets, JobContext& context) = 0;

    // MSV filter score (nats, before the null model; +infinity on the byte
    // range's overflow) of `model` against every loaded target: scores[t].
    virtual void msv(const MsvProfile& model, std::span<float> scores, JobContext& context) = 0;

    // Viterbi filter scores (nats) of `model` against the targets listed:
    // scores[i] is for targets[i].
    virtual void viterbi(const ViterbiFilterProfile& model, std::span<const std::uint32_t> targets,
                         std::span<float> scores, JobContext& context) = 0;

    // The parser Forward of `model` (multihit) over the targets listed, on
    // the device, bit for bit the CPU's forward(); false when the scanner has
    // no device Forward (the pipeline runs it on its CPU threads).
    virtual bool forward(const ForwardProfile& /*model*/, std::span<const std::uint32_t> /*targets*/,
                         ForwardScores& /*out*/, JobContext& /*context*/) {
        return false;
    }
    // Whether forward() may run on the device (it may still answer false).
    virtual bool runs_forward() const { return false; }

    // The parser Backward of `model` (multihit) on the device, bit for bit
    // the CPU's backward() given the Forward rows in `forward`: what
    // forward() returned for the list `forward_targets`. out's entry j is
    // for forward_targets[positions[j]] (the targets past the Fwd filter,
    // say). False when the scanner has no device Backward (the pipeline runs
    // it on its CPU threads); throws Error where the inputs do not match.
    virtual bool backward(const ForwardProfile& /*model*/, std::span<const std::uint32_t> /*forward_targets*/,
                          const ForwardScores& /*forward*/, std::span<const std::uint32_t> /*positions*/,
                          BackwardScores& /*out*/, JobContext& /*context*/) {
        return false;
    }
    // Whether backward() may run on the device (it may still answer false).
    virtual bool runs_backward() const { return false; }

    // The domain stage's rescoring of envelopes on the device: per job, the
    // unihit Forward and Backward over the envelope with the target's unihit
    // length model, posterior decoding, the optimal accuracy DP and
    // traceback and (where asked) null2, bit for bit the CPU's
    // (rescore_envelope_reference()); out[n] is jobs[n]'s. False when the
    // scanner has no device rescoring (the domain stage runs it on its CPU
    // threads); throws Error for a job outside its target.
    virtual bool rescore_envelopes(const ForwardProfile& /*unihit*/, std::span<const EnvelopeJob> /*jobs*/,
                                   std::vector<EnvelopeOutcome>& /*out*/, JobContext& /*context*/) {
        return false;
    }
    // Whether rescore_envelopes() may run on the device (it may still answer false).
    virtual bool runs_envelopes() const { return false; }

    // The cost of the last msv() and of the viterbi() calls since it.
    virtual ProfileFilterStats last_stats() const { return {}; }
};

class ProfileScannerRegistry {
public:
    using Factory = std::function<std::unique_ptr<ProfileFilterScanner>(int threads)>;
    void add(DeviceInfo info, Factory factory);
    std::vector<DeviceInfo> devices() const;
    // "cpu", "gpu:N", or "auto" (the first GPU if any, else "cpu"). Throws
    // Error naming --device and listing the devices.
    std::unique_ptr<ProfileFilterScanner> create(std::string_view spec, int threads) const;

private:
    struct Entry {
        DeviceInfo info;
        Factory factory;
    };
    std::vector<Entry> entries_;
};

// The registry with the CPU scanners ("cpu", "cpu-ref").
std::unique_ptr<ProfileScannerRegistry> make_cpu_profile_scanner_registry();

// Runs body(i) for i in [0, n) on `threads` workers (0 = all cores), handing
// out `chunk` indices at a time (1 where items cost very different amounts);
// the first exception is rethrown after all stop.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body, std::size_t chunk = 16);

}  // namespace alignscope::profile
