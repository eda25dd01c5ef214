// From what the envelope lanes (envelope_lanes.hpp) leave for one envelope to
// the engine's EnvelopeOutcome, the same on the GPU's results and the CPU
// emulation's: the scores through forward_score_of()/backward_score_of() (so
// that they throw where the CPU's Forward and Backward would), the trace
// reversed into TraceSteps, null2 completed over the degenerate codes; and
// the CPU emulation of one envelope for tests. Host code only, no CUDA.
#pragma once

#include "envelope_lanes.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/filter_scan.hpp>

#include <optional>
#include <string>
#include <vector>

namespace alignscope::kernels::profile {

// The Forward profile's striped floats (at `striped`, on the device or the
// host) as the Forward, Backward and envelope kernels read them.
inline ForwardModelView envelope_model_view(const alignscope::profile::ForwardProfile& om, const float* striped) {
    ForwardModelView m;
    m.striped = striped;
    m.Q = om.segments;
    m.M = om.length;
    m.e_loop = om.e_loop;
    m.e_move = om.e_move;
    return m;
}

// The outcome of one envelope of `target_length` residues from the lanes'
// result, their trace steps (T first; result.steps of them) and the K
// canonical residues' null2 odds (null when not asked). Nothing where the
// Backward needed scale factors of its own, or the traceback did not fit
// (result.status) and the scores do not already end it: the caller redoes
// the envelope (rescore_envelope_reference()).
inline std::optional<alignscope::profile::EnvelopeOutcome> envelope_outcome(
    const EnvelopeResult& r, const EnvelopeStep* steps, const float* null2, int envelope_length,
    alignscope::profile::ResidueAlphabet alphabet, int target_length) {
    namespace ap = alignscope::profile;
    if (r.status == kEnvelopeOwnScales) return std::nullopt;
    ap::EnvelopeOutcome out;
    try {
        out.env_score = ap::forward_score_of(ap::LengthModel::for_target(target_length, false), r.fwd_xC,
                                             r.fwd_total_scale, envelope_length);
        (void)ap::backward_score_of(r.bck_xN, r.bck_total_scale, envelope_length);
    } catch (const Error& e) {
        out = ap::EnvelopeOutcome{};
        out.error = e.what();
        return out;
    }
    if (!r.decoded) return out;
    if (r.status != kEnvelopeOk) return std::nullopt;
    out.decoded = true;
    out.accuracy = r.accuracy;
    out.trace.reserve(static_cast<std::size_t>(r.steps));
    for (int z = r.steps - 1; z >= 0; --z) {
        const EnvelopeStep& s = steps[z];
        out.trace.push_back({static_cast<ap::TraceStep::State>(s.state), s.k, s.i, s.posterior});
    }
    if (null2) {
        out.null2.assign(null2, null2 + ap::ResidueCode::of(alphabet).canonical());
        ap::complete_null2(out.null2, alphabet);
    }
    return out;
}

// The CPU emulation's storage for one envelope (grown, never shrunk).
struct HostEnvelopeStorage {
    std::vector<float> cells, specials, usage, null2;
    std::vector<EnvelopeStep> trace;
};

// An envelope view over `storage`, sized for job's envelope on `dsq` (the
// target's residues, L of them) and a model of Q segments and M nodes.
inline EnvelopeView host_envelope_view(HostEnvelopeStorage& storage, const std::uint8_t* dsq, int L,
                                       const alignscope::profile::EnvelopeJob& job, int Q, int M, int K) {
    const int n = job.j - job.i + 1;
    const alignscope::profile::LengthModel length = alignscope::profile::LengthModel::for_target(L, false);
    storage.cells.assign(envelope_cell_floats(n, Q), 0.0f);
    storage.specials.assign(envelope_special_floats(n), 0.0f);
    storage.usage.assign(envelope_usage_floats(Q), 0.0f);
    storage.null2.assign(static_cast<std::size_t>(K), 0.0f);
    storage.trace.assign(static_cast<std::size_t>(envelope_trace_room(n, M)), EnvelopeStep{});
    EnvelopeView t;
    t.dsq = dsq + job.i - 1;
    t.L = n;
    t.loop = length.loop;
    t.move = length.move;
    t.cells = storage.cells.data();
    t.specials = storage.specials.data();
    t.usage = storage.usage.data();
    t.null2 = job.null2 ? storage.null2.data() : nullptr;
    t.K = K;
    t.trace = storage.trace.data();
    t.trace_room = static_cast<int>(storage.trace.size());
    return t;
}

// The CPU emulation of one envelope with lanes `g` (run it under
// FlushSubnormals): what the GPU kernel computes, turned into an outcome.
template <class Lanes>
alignscope::profile::EnvelopeOutcome emulate_envelope_with(Lanes& g, const alignscope::profile::ForwardProfile& om,
                                                           alignscope::profile::ResidueAlphabet alphabet,
                                                           const std::uint8_t* dsq, int L,
                                                           const alignscope::profile::EnvelopeJob& job) {
    HostEnvelopeStorage storage;
    const int K = alignscope::profile::ResidueCode::of(alphabet).canonical();
    const EnvelopeView t = host_envelope_view(storage, dsq, L, job, om.segments, om.length, K);
    const EnvelopeResult r = envelope_rescore(g, envelope_model_view(om, om.striped.data()), t);
    auto out = envelope_outcome(r, storage.trace.data(), job.null2 ? storage.null2.data() : nullptr, t.L, alphabet, L);
    if (out) return std::move(*out);
    // A Backward that needs scale factors of its own: the CPU's, as the scanner does.
    if (r.status == kEnvelopeOwnScales)
        return alignscope::profile::rescore_envelope_reference(om, alphabet, dsq, L, job);
    alignscope::profile::EnvelopeOutcome failed;
    failed.error = "envelope traceback status " + std::to_string(r.status);
    return failed;
}

// The CPU emulation of one envelope (run it under FlushSubnormals): what the
// GPU kernel computes, turned into an outcome; a traceback with no room is
// reported as an error (the scanner would redo it on the CPU).
// With `shared_row`, the lanes keep the GPU kernel's one shared row updated
// in place (HostSharedRowLanes), else every row apart (HostEnvelopeLanes).
inline alignscope::profile::EnvelopeOutcome emulate_envelope(const alignscope::profile::ForwardProfile& om,
                                                             alignscope::profile::ResidueAlphabet alphabet,
                                                             const std::uint8_t* dsq, int L,
                                                             const alignscope::profile::EnvelopeJob& job,
                                                             bool shared_row = false) {
    if (job.i < 1 || job.j < job.i || job.j > L) throw Error("envelope outside its target");
    if (shared_row) {
        HostSharedRowLanes g(om.segments);
        return emulate_envelope_with(g, om, alphabet, dsq, L, job);
    }
    HostEnvelopeLanes g;
    return emulate_envelope_with(g, om, alphabet, dsq, L, job);
}

}  // namespace alignscope::kernels::profile
