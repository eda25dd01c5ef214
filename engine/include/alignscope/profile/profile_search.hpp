// hmmsearch's pipeline over one profile and many targets: the MSV filter, the
// composition bias filter, the Viterbi filter (skipped when MSV's P-value is
// already below F2), Forward, then the domain stage for the targets that pass;
// E-values from the profile's STATS calibration times the search space; and
// hmmsearch's reporting and inclusion thresholds. Bit scores throughout.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::profile {

struct PipelineSettings {
    double F1 = 0.02, F2 = 1e-3, F3 = 1e-5;  // MSV, Viterbi, Forward P-value thresholds
    bool bias_filter = true;
    bool null2 = true;
    // Reporting: E-value thresholds unless a bit score threshold is set.
    double report_E = 10.0, domain_E = 10.0, include_E = 0.01, include_domain_E = 0.01;
    std::optional<double> report_T, domain_T, include_T, include_domain_T;
    std::optional<double> Z, domZ;  // search space sizes; default: targets, reported targets
    std::uint32_t seed =
        42;                  // domain stage's stochastic clustering, reseeded per region; 0 = an arbitrary seed per run
    int threads = 0;         // CPU workers for the stages after the filters; 0 = all cores
    bool alignments = true;  // build the domain alignments (-A, the text output)
    // A device Forward's first batch of targets (batches then double, to 8x
    // this): the worker threads start on a batch's survivors while the device
    // scores the next.
    std::size_t device_batch = 512;
    // A longer target stays off the device: one target runs on four GPU
    // threads, several times slower than on a CPU core, and a batch takes as
    // long as its longest target; so the longest go to the worker threads
    // while the device does the rest. (A length, not cells: a longer model
    // makes both sides' work grow alike.)
    int device_length = 1500;
    // The same for models of long_model nodes or more, whose domain stage
    // keeps the CPU threads busy throughout: the device takes longer targets
    // off them. Measured on one H100 with 16 threads against DB.fasta x10
    // (same run, two runs each): SMC_N (1,142 nodes) 3.8 / 4.1 s at 1,500
    // against 3.0 / 3.2 s at 3,000, the 12 protein-examples models 5.0 / 5.3
    // against 4.5 / 4.7 s; Patched (803) 0.54 / 0.44 against 0.53 / 0.56 s;
    // Pkinase, fn3 and globins4 (86 to 260) were slower at 3,000.
    int device_length_long_model = 3000;
    int long_model = 600;
    int device_length_for(int model_length) const {
        return model_length >= long_model ? device_length_long_model : device_length;
    }
    // Envelopes the device rescores at a time (it waits for that many), and
    // whether the worker threads take waiting envelopes when they are idle
    // (so that device and CPU each take what they can).
    std::size_t device_envelopes = 512;
    bool cpu_takes_envelopes = true;
    // --max: every filter off.
    void set_max() {
        F1 = F2 = F3 = 1.0;
        bias_filter = false;
    }
};

struct PipelineCounts {
    std::uint64_t targets = 0, residues = 0;
    std::uint64_t past_msv = 0, past_bias = 0, past_viterbi = 0, past_forward = 0;
    std::uint64_t residues_past_msv = 0, residues_past_bias = 0, residues_past_viterbi = 0, residues_past_forward = 0;
    std::uint64_t regions = 0, clustered = 0, overlaps = 0, envelopes = 0, domains = 0;
};

// One domain's alignment to the model, as hmmsearch displays it.
struct DomainAlignment {
    std::string model;                    // model line: consensus letters, '.' for insert columns
    std::string match;                    // middle line: identical letters, '+' for positive scores, ' ' otherwise
    std::string target;                   // target residues, '-' for deletions, lower case in inserts
    std::string posterior;                // posterior probability of each aligned residue: 0-9, '*', '.' for gaps
    std::vector<float> posterior_values;  // the same probabilities, 0 for deletions
    std::string reference, structure;     // RF and CS lines, when the model has them
    int hmm_from = 0, hmm_to = 0;         // 1-based model coordinates
    int target_from = 0, target_to = 0;   // 1-based target coordinates
};

struct DomainHit {
    int env_from = 0, env_to = 0;  // envelope on the target, 1-based inclusive
    float env_score = 0;           // nats: Forward score of the envelope
    float correction = 0;          // nats: null2 correction of the domain
    float bias = 0;                // bits: the domain's bias (null2) correction
    float score = 0;               // bits
    double lnP = 0;                // log P-value
    float expected_accuracy = 0;   // mean posterior probability of the aligned residues
    bool reported = false, included = false;
    DomainAlignment alignment;
};

struct TargetHit {
    std::size_t target = 0;  // index into the ProfileTargets
    std::string name, description;
    int length = 0;
    float score = 0, pre_score = 0, sum_score = 0;  // bits
    double lnP = 0, pre_lnP = 0, sum_lnP = 0;
    float expected_domains = 0;  // posterior expectation of the number of domains
    int regions = 0, clustered = 0, overlaps = 0, envelopes = 0;
    std::vector<DomainHit> domains;
    int best_domain = 0;
    int reported_domains = 0, included_domains = 0;
    bool reported = false, included = false;
};

// One stage's cost: wall clock, the process's CPU time (every thread's,
// user and system) and its page faults (minor and major) while it ran.
struct StageCost {
    double seconds = 0, cpu_seconds = 0;
    std::uint64_t page_faults = 0;
};

// Where one model's search time went, stage by stage.
struct PipelineStages {
    StageCost msv, bias, viterbi;  // the filters (bias: the bias filter and the MSV decisions)
    StageCost survivors;           // Forward, Backward and the domain stage of the Viterbi survivors
    double device_forward = 0;     // of that, seconds in the device's Forward calls (beside the worker threads)
    double device_backward = 0;    // and in its Backward calls
    double device_envelopes = 0;   // and in its rescoring of envelopes
    std::uint64_t envelopes_on_device = 0, envelopes_on_cpu = 0;  // of the device path's envelopes
    double worker_wait = 0;  // the worker threads' time waiting for the device, summed over threads
    int device_batches = 0;
};

struct ModelSearch {
    std::string name, accession, description;
    int model_length = 0;
    PipelineCounts counts;
    PipelineStages stages;
    std::vector<TargetHit> hits;  // targets past the domain stage, best first
    double Z = 0, domZ = 0;
    int reported = 0, included = 0;
    double seconds = 0;
};

// Searches every target with one model. Progress counts targets (items) and
// model length x residues (cells) of the MSV stage.
ModelSearch search_profile(const ProfileHmm& hmm, const ProfileTargets& targets, ProfileFilterScanner& scanner,
                           const PipelineSettings& settings, JobContext& context);

// Gumbel and exponential-tail survival functions as the P-values use them.
double gumbel_survival(double x, double mu, double lambda);
double exponential_log_survival(double x, double tau, double lambda);

}  // namespace alignscope::profile
