// The CPU reference of an envelope's rescoring: the domain stage's own calls
// (forward_group/backward_group of one envelope with full matrices and D in
// two rows, decode_and_align(), the optimal accuracy traceback), their
// results gathered into an EnvelopeOutcome.
#include <alignscope/error.hpp>
#include <alignscope/profile/envelope_rescore.hpp>

#include "forward_pair.hpp"
#include "posterior_decoding.hpp"

namespace alignscope::profile {

EnvelopeOutcome rescore_envelope_reference(const ForwardProfile& unihit, ResidueAlphabet alphabet,
                                           const std::uint8_t* dsq, int L, const EnvelopeJob& job) {
    if (job.i < 1 || job.j < job.i || job.j > L)
        throw Error("envelope " + std::to_string(job.i) + ".." + std::to_string(job.j) + " is not within target " +
                    std::to_string(job.target) + " of " + std::to_string(L) + " residues");
    const FlushSubnormals flush;
    const LengthModel length = LengthModel::for_target(L, false);
    // Matrices kept from envelope to envelope on each thread, as the domain
    // stage keeps its own (allocating them each time costs page faults).
    thread_local DpMatrix fx, bx, pp, ox;
    PairTarget group{dsq + job.i - 1, job.j - job.i + 1, length, &fx, &bx};
    EnvelopeOutcome out;
    try {
        float envsc = 0, bcksc = 0;
        forward_group(unihit, &group, 1, true, &envsc, false);
        backward_group(unihit, &group, 1, true, &bcksc, false);
        out.env_score = envsc;
        std::vector<float> null2;
        const std::optional<float> decoded =
            decode_and_align(unihit, length, fx, bx, pp, ox, alphabet, job.null2 ? &null2 : nullptr);
        if (!decoded) return out;
        out.decoded = true;
        out.accuracy = *decoded;
        out.trace = accuracy_traceback(unihit, length, pp, ox);
        out.null2 = std::move(null2);
    } catch (const Error& e) {
        out = EnvelopeOutcome{};
        out.error = e.what();
    }
    return out;
}

void complete_null2(std::vector<float>& null2, ResidueAlphabet alphabet) {
    const ResidueCode& code = ResidueCode::of(alphabet);
    const int K = code.canonical(), Kp = code.all_codes();
    null2.resize(static_cast<std::size_t>(Kp), 1.0f);
    for (int x = K + 1; x <= Kp - 3; ++x) {
        float result = 0.0f, denom = 0.0f;
        for (int y = 0; y < K; ++y)
            if (code.stands_for(x, y)) {
                result += null2[static_cast<std::size_t>(y)];
                denom += 1.0f;
            }
        null2[static_cast<std::size_t>(x)] = result / denom;
    }
    null2[static_cast<std::size_t>(code.gap())] = 1.0f;
    null2[static_cast<std::size_t>(code.nonresidue())] = 1.0f;
    null2[static_cast<std::size_t>(code.missing())] = 1.0f;
}

}  // namespace alignscope::profile
