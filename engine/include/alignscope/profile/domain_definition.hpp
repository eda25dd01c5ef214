// hmmsearch's domain stage for one target that passed the filters: posterior
// decoding of where domains begin and end, regions above the posterior
// thresholds, stochastic traceback clustering of regions that hold several
// domains (reseeded from the same seed for every region, so results do not
// depend on target order), then each envelope rescored on its own: Forward and
// Backward in unihit mode, the null2 composition correction, and the optimal
// accuracy alignment with its posterior probabilities.
#pragma once

#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/plan7_profile.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace alignscope::profile {

// Easel's fast generator (Knuth's 32-bit LCG, seed mixed by Jenkins' mix), as
// hmmsearch's domain stage draws its stochastic tracebacks from it.
class DomainRandom {
public:
    explicit DomainRandom(std::uint32_t seed) { reseed(seed); }
    void reseed(std::uint32_t seed);
    double uniform() {  // [0, 1)
        x_ = x_ * 69069u + 1u;
        return static_cast<double>(x_) / 4294967296.0;
    }
    std::uint32_t seed() const { return seed_; }

private:
    std::uint32_t seed_ = 0, x_ = 0;
};

// One path through the model: Plan7 states with model node k, target position
// i (1-based, 0 when the state emits nothing) and posterior probability.
struct TraceStep {
    enum State : char { S = 'S', N = 'N', B = 'B', M = 'M', D = 'D', I = 'I', E = 'E', C = 'C', J = 'J', T = 'T' };
    State state;
    int k = 0, i = 0;
    float posterior = 0;
};

struct ConfiguredProfile {
    Plan7Profile plan7;
    MsvProfile msv;
    ViterbiFilterProfile viterbi;
    ForwardProfile multihit, unihit;
    std::string reference, structure;  // RF and CS annotation [0..M], empty when absent
    explicit ConfiguredProfile(const ProfileHmm& hmm, const NullModel& null_model);
};

struct DomainStage {
    float expected_domains = 0;
    int regions = 0, clustered = 0, overlaps = 0, envelopes = 0;
    std::vector<DomainHit> domains;  // env_score, correction, envelope, alignment, accuracy set
    std::vector<float> null2;        // per position 1..L (index 0 unused): null2 log odds, nats
};

// The domain stage on target dsq[0..L-1], given the pipeline's Forward and
// Backward parser matrices (multihit, this target's length model).
DomainStage define_domains(const ConfiguredProfile& profile, const std::uint8_t* dsq, int L, const DpMatrix& fwd,
                           const DpMatrix& bck, std::uint32_t seed, bool alignments);

// One target of several whose domain stages run together: its residues and
// its parser matrices.
struct DomainTarget {
    const std::uint8_t* dsq;
    int L;
    const DpMatrix* fwd;
    const DpMatrix* bck;
};
// The domain stages of n targets, the same as define_domains() of each; the
// envelopes of all of them are rescored in groups (their Forward and
// Backward rows side by side in SIMD registers where the CPU can).
std::vector<DomainStage> define_domains(const ConfiguredProfile& profile, const DomainTarget* targets, int n,
                                        std::uint32_t seed, bool alignments);

// An envelope rescored elsewhere (on a device): what the CPU's unihit
// Forward, Backward, posterior decoding and optimal accuracy give for it.
struct RescoredEnvelope {
    float envsc = 0;                // nats: the envelope's Forward score
    std::optional<float> accuracy;  // the optimal-accuracy score; none where the posteriors underflowed
    std::vector<TraceStep> trace;   // the optimal-accuracy trace, i relative to the envelope
    std::vector<float> null2;       // null2 odds per residue code, where the envelope wants its own
};

// One target's domain stage in three steps, so that the envelopes of many
// targets can be rescored together on a device: find the envelopes (regions,
// stochastic traces) from the parser matrices; rescore each, on the CPU
// (rescore_on_cpu) or from a device's outcome (rescored); then finish(),
// which gives what define_domains() gives.
class TargetDomains {
public:
    struct Span {
        int i = 0, j = 0;          // 1-based, inclusive
        bool wants_null2 = false;  // its null2 comes from its own posteriors
    };
    TargetDomains(const ConfiguredProfile& profile, const std::uint8_t* dsq, int L, std::uint32_t seed,
                  bool alignments);
    ~TargetDomains();
    TargetDomains(TargetDomains&&) noexcept;
    TargetDomains& operator=(TargetDomains&&) noexcept;

    void find_envelopes(const DpMatrix& fwd, const DpMatrix& bck);
    std::size_t envelope_count() const;
    Span envelope(std::size_t e) const;
    int length() const;
    void rescore_on_cpu();
    void rescored(std::size_t e, RescoredEnvelope outcome);
    DomainStage finish();

private:
    struct Definition;
    std::unique_ptr<Definition> d_;
};

}  // namespace alignscope::profile
