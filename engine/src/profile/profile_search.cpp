// hmmsearch's pipeline, stage by stage. The filter stage goes through a
// ProfileFilterScanner as two batches (MSV over every target, then the
// Viterbi filter over those that need it), then Forward over the survivors
// on the scanner's device where it has one; Backward and the domain stage
// (and Forward on a scanner without one) run on CPU threads over the few
// targets that pass.
#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/profile_search.hpp>

#include "forward_pair.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include <sys/resource.h>

namespace alignscope::profile {

namespace {

constexpr double kLog2 = 0.69314718055994529;

// log(exp(a) + exp(b)) by HMMER's table (steps of 0.001 nats, exact past 15.7).
float table_logsum(float a, float b) {
    static const std::vector<float> table = [] {
        std::vector<float> t(16000);
        for (int i = 0; i < 16000; ++i)
            t[static_cast<std::size_t>(i)] = static_cast<float>(std::log(1.0 + std::exp(-i / 1000.0)));
        return t;
    }();
    const float max = std::max(a, b), min = std::min(a, b);
    if (min == -std::numeric_limits<float>::infinity() || (max - min) >= 15.7f) return max;
    return max + table[static_cast<std::size_t>(static_cast<int>((max - min) * 1000.0f))];
}

float compensated_sum(const std::vector<float>& v) {
    float sum = 0.0f, c = 0.0f;
    for (float x : v) {
        const float y = x - c;
        const float t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    return sum;
}

// Laps of wall clock, CPU time and page faults (the process's: every thread's).
class StageClock {
public:
    StageClock() : wall_(std::chrono::steady_clock::now()), usage_(usage()) {}
    StageCost lap() {
        const auto now = std::chrono::steady_clock::now();
        const rusage u = usage();
        StageCost cost;
        cost.seconds = std::chrono::duration<double>(now - wall_).count();
        cost.cpu_seconds =
            seconds_of(u.ru_utime) + seconds_of(u.ru_stime) - seconds_of(usage_.ru_utime) - seconds_of(usage_.ru_stime);
        cost.page_faults =
            static_cast<std::uint64_t>((u.ru_minflt + u.ru_majflt) - (usage_.ru_minflt + usage_.ru_majflt));
        wall_ = now;
        usage_ = u;
        return cost;
    }

private:
    static rusage usage() {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return u;
    }
    static double seconds_of(const timeval& t) {
        return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
    }
    std::chrono::steady_clock::time_point wall_;
    rusage usage_;
};

// What the filter stage left for the later stages, per target.
struct Candidate {
    std::uint32_t target;
    float nullsc, filtersc;
};

}  // namespace

double gumbel_survival(double x, double mu, double lambda) {
    const double y = lambda * (x - mu);
    const double ey = -std::exp(-y);
    if (std::fabs(ey) < 5e-9) return -ey;
    return 1.0 - std::exp(ey);
}

double exponential_log_survival(double x, double tau, double lambda) {
    if (x < tau) return 0.0;
    return -lambda * (x - tau);
}

namespace {

// The filter stage: MSV over every target, the null and bias filter decisions
// on the host, the Viterbi filter over the targets whose MSV P-value is not
// already below F2. Returns the survivors in target order.
std::vector<Candidate> run_filters(const ConfiguredProfile& profile, const NullModel& null_model,
                                   const ProfileTargets& targets, ProfileFilterScanner& scanner,
                                   const PipelineSettings& settings, JobContext& context, PipelineCounts& counts,
                                   PipelineStages& stages) {
    const ProfileStatistics& stats = profile.plan7.statistics;
    const std::size_t n = targets.size();
    std::vector<float> msv(n);
    StageClock clock;
    scanner.msv(profile.msv, msv, context);
    stages.msv = clock.lap();
    if (context.progress) {
        Progress p;
        p.items_done = p.items_total = n;
        p.cells_done = p.cells_total = counts.residues * static_cast<std::uint64_t>(profile.plan7.length);
        context.progress(p);
    }
    // The targets past MSV, then their bias filter scores on the worker
    // threads (a Forward over two states per residue: serial, it would cap
    // the speed-up of the stages after it).
    std::vector<std::uint32_t> past_msv;
    for (std::size_t t = 0; t < n; ++t) {
        const int L = targets.length(t);
        if (L == 0) continue;
        const float seq_score = static_cast<float>((msv[t] - NullModel::null_score(L)) / kLog2);
        if (gumbel_survival(seq_score, stats.msv_mu, stats.msv_lambda) > settings.F1) continue;
        past_msv.push_back(static_cast<std::uint32_t>(t));
        ++counts.past_msv;
        counts.residues_past_msv += static_cast<std::uint64_t>(L);
    }
    std::vector<float> bias(past_msv.size());
    if (settings.bias_filter)
        parallel_for(past_msv.size(), settings.threads, [&](std::size_t b) {
            const FlushSubnormals flush;  // the bias filter's arithmetic, as hmmsearch's
            bias[b] = null_model.filter_score(targets.codes(past_msv[b]), targets.length(past_msv[b]));
        });
    std::vector<Candidate> to_viterbi, past_viterbi;
    std::vector<std::uint32_t> viterbi_targets;
    for (std::size_t b = 0; b < past_msv.size(); ++b) {
        const std::uint32_t t = past_msv[b];
        const int L = targets.length(t);
        const float nullsc = NullModel::null_score(L);
        double P = gumbel_survival(static_cast<float>((msv[t] - nullsc) / kLog2), stats.msv_mu, stats.msv_lambda);
        float filtersc = nullsc;
        if (settings.bias_filter) {
            filtersc = bias[b];
            const float seq_score = static_cast<float>((msv[t] - filtersc) / kLog2);
            P = gumbel_survival(seq_score, stats.msv_mu, stats.msv_lambda);
            if (P > settings.F1) continue;
        }
        ++counts.past_bias;
        counts.residues_past_bias += static_cast<std::uint64_t>(L);
        const Candidate c{static_cast<std::uint32_t>(t), nullsc, filtersc};
        if (P > settings.F2) {
            to_viterbi.push_back(c);
            viterbi_targets.push_back(c.target);
        } else {
            past_viterbi.push_back(c);
        }
    }
    stages.bias = clock.lap();
    std::vector<float> vit(viterbi_targets.size());
    scanner.viterbi(profile.viterbi, viterbi_targets, vit, context);
    for (std::size_t v = 0; v < to_viterbi.size(); ++v) {
        const float seq_score = static_cast<float>((vit[v] - to_viterbi[v].filtersc) / kLog2);
        const double P = gumbel_survival(seq_score, stats.viterbi_mu, stats.viterbi_lambda);
        if (P <= settings.F2) past_viterbi.push_back(to_viterbi[v]);
    }
    std::sort(past_viterbi.begin(), past_viterbi.end(),
              [](const Candidate& a, const Candidate& b) { return a.target < b.target; });
    counts.past_viterbi = past_viterbi.size();
    for (const auto& c : past_viterbi)
        counts.residues_past_viterbi += static_cast<std::uint64_t>(targets.length(c.target));
    stages.viterbi = clock.lap();
    return past_viterbi;
}

// What the stages after the filters found for one surviving target.
struct Slot {
    bool past_forward = false;
    std::optional<TargetHit> hit;
    int regions = 0, clustered = 0, overlaps = 0, envelopes = 0, domains = 0;
};

// hmmsearch's per-sequence score: the Forward score less the null and null2
// (sequence bias) corrections, or the sum of the domains' scores when that is
// higher; then every domain's own score.
TargetHit target_hit_of(const Candidate& c, const ProfileTargets& targets, const ProfileStatistics& stats,
                        const PipelineSettings& settings, float fwdsc, DomainStage& stage) {
    const int L = targets.length(c.target);
    const float log_omega = static_cast<float>(std::log(static_cast<double>(NullModel::kOmega)));
    const float nullsc = c.nullsc;
    float seqbias = 0.0f;
    if (settings.null2) seqbias = table_logsum(0.0f, log_omega + compensated_sum(stage.null2));
    float pre_score = static_cast<float>((fwdsc - nullsc) / kLog2);
    float seq_score = static_cast<float>((fwdsc - (nullsc + seqbias)) / kLog2);
    // The score rebuilt from the domains that still score after null2.
    float sum_score = 0.0f;
    float domain_bias = 0.0f;
    int Ld = 0;
    for (const DomainHit& d : stage.domains) {
        const bool counts_in = settings.null2 ? d.env_score - d.correction > 0.0f : d.env_score > 0.0f;
        if (!counts_in) continue;
        sum_score += d.env_score;
        Ld += d.env_to - d.env_from + 1;
        if (settings.null2) domain_bias += d.correction;
    }
    domain_bias = settings.null2 ? table_logsum(0.0f, log_omega + domain_bias) : 0.0f;
    sum_score += static_cast<float>((L - Ld) * std::log(static_cast<float>(L) / static_cast<float>(L + 3)));
    const float pre2_score = static_cast<float>((sum_score - nullsc) / kLog2);
    sum_score = static_cast<float>((sum_score - (nullsc + domain_bias)) / kLog2);
    if (Ld > 0 && sum_score > seq_score) {
        seq_score = sum_score;
        pre_score = pre2_score;
    }
    TargetHit hit;
    hit.target = c.target;
    hit.name = targets.names[c.target];
    hit.description = targets.descriptions[c.target];
    hit.length = L;
    hit.score = seq_score;
    hit.pre_score = pre_score;
    hit.sum_score = sum_score;
    hit.lnP = exponential_log_survival(seq_score, stats.forward_tau, stats.forward_lambda);
    hit.pre_lnP = exponential_log_survival(pre_score, stats.forward_tau, stats.forward_lambda);
    hit.sum_lnP = exponential_log_survival(sum_score, stats.forward_tau, stats.forward_lambda);
    hit.expected_domains = stage.expected_domains;
    hit.regions = stage.regions;
    hit.clustered = stage.clustered;
    hit.overlaps = stage.overlaps;
    hit.envelopes = stage.envelopes;
    hit.domains = std::move(stage.domains);
    hit.best_domain = 0;
    for (std::size_t d = 0; d < hit.domains.size(); ++d) {
        DomainHit& dom = hit.domains[d];
        const int len = dom.env_to - dom.env_from + 1;
        float bitscore =
            dom.env_score + static_cast<float>((L - len) * std::log(static_cast<float>(L) / static_cast<float>(L + 3)));
        const float dombias = settings.null2 ? table_logsum(0.0f, log_omega + dom.correction) : 0.0f;
        bitscore = static_cast<float>((bitscore - (nullsc + dombias)) / kLog2);
        dom.score = bitscore;
        dom.bias = static_cast<float>(dombias * (1.0 / kLog2));
        dom.lnP = exponential_log_survival(bitscore, stats.forward_tau, stats.forward_lambda);
        if (dom.score > hit.domains[static_cast<std::size_t>(hit.best_domain)].score)
            hit.best_domain = static_cast<int>(d);
    }
    return hit;
}

// Whether a target's Forward score passes the F3 filter.
bool passes_forward(const ProfileStatistics& stats, const PipelineSettings& settings, const Candidate& c, float fwdsc) {
    const float seq_score = static_cast<float>((fwdsc - c.filtersc) / kLog2);
    return std::exp(exponential_log_survival(seq_score, stats.forward_tau, stats.forward_lambda)) <= settings.F3;
}

// A target past F3 after its domain stage.
Slot slot_of(const Candidate& c, const ProfileTargets& targets, const ProfileStatistics& stats,
             const PipelineSettings& settings, float fwdsc, DomainStage& stage) {
    Slot slot;
    slot.past_forward = true;
    slot.regions = stage.regions;
    slot.clustered = stage.clustered;
    slot.overlaps = stage.overlaps;
    slot.envelopes = stage.envelopes;
    slot.domains = static_cast<int>(stage.domains.size());
    if (stage.regions == 0 || stage.envelopes == 0 || stage.domains.empty()) return slot;
    slot.hit = target_hit_of(c, targets, stats, settings, fwdsc, stage);
    return slot;
}

// A survivor's parser Forward as the device left it: every row's specials
// (all that Backward and the domain stage read of the Forward matrix).
void load_device_forward(const ForwardScores& device, std::size_t s, int M, int L, DpMatrix& fwd) {
    fwd.resize(M, L, false);
    const std::size_t n = (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials;
    const float* from = device.specials.data() + device.first_row[s] * DpMatrix::Specials;
    std::copy(from, from + n, fwd.xmx.begin());
    fwd.total_scale = device.total_scale[s];
}

// Forward (the F3 filter), then Backward and the domain stage, for one to
// eight targets on a worker thread: a group runs its parser Forward and
// Backward rows together (see forward_pair.hpp), then each target's domain
// stage on its own.
void score_targets(const ConfiguredProfile& profile, const Candidate* const* c, int n, const ProfileTargets& targets,
                   const PipelineSettings& settings, std::uint32_t seed, Slot* const* out) {
    const FlushSubnormals flush;
    const ForwardProfile& om = profile.multihit;
    // The parser matrices (two rows and every row's specials), kept by each
    // worker thread from target to target.
    thread_local DpMatrix fwd[kGroupTargets], bck[kGroupTargets];
    PairTarget t[kGroupTargets];
    for (int j = 0; j < n; ++j) {
        const int L = targets.length(c[j]->target);
        t[j] = PairTarget{targets.codes(c[j]->target), L, LengthModel::for_target(L, true), &fwd[j], &bck[j]};
    }
    float fwdsc[kGroupTargets] = {}, bcksc[kGroupTargets];
    forward_group(om, t, n, false, fwdsc);
    // Backward and the domain stage of those past F3, together.
    PairTarget passed[kGroupTargets];
    DomainTarget domain_targets[kGroupTargets];
    int past[kGroupTargets], n_passed = 0;
    for (int j = 0; j < n; ++j)
        if (passes_forward(profile.plan7.statistics, settings, *c[j], fwdsc[j])) {
            past[n_passed] = j;
            domain_targets[n_passed] = DomainTarget{t[j].dsq, t[j].L, &fwd[j], &bck[j]};
            passed[n_passed++] = t[j];
        }
    if (n_passed == 0) return;
    backward_group(om, passed, n_passed, false, bcksc);
    std::vector<DomainStage> stages = define_domains(profile, domain_targets, n_passed, seed, settings.alignments);
    for (int k = 0; k < n_passed; ++k) {
        const int j = past[k];
        *out[j] =
            slot_of(*c[j], targets, profile.plan7.statistics, settings, fwdsc[j], stages[static_cast<std::size_t>(k)]);
    }
}

// Up to eight neighbours of the longest-first order, scored by one worker.
struct WorkItem {
    std::size_t first;
    int n;
};

// Work for the worker threads, taken in order of arrival while the device
// thread adds more.
class TaskQueue {
public:
    void push(std::function<void()> task) {
        {
            std::lock_guard lock(mutex_);
            if (aborted_) return;
            tasks_.push_back(std::move(task));
        }
        ready_.notify_one();
    }
    // No more tasks (abort: and drop what is queued).
    void close(bool abort = false) {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
            if (abort) {
                aborted_ = true;
                tasks_.clear();
            }
        }
        ready_.notify_all();
    }
    bool aborted() const {
        std::lock_guard lock(mutex_);
        return aborted_;
    }
    double wait_seconds() const {
        std::lock_guard lock(mutex_);
        return wait_seconds_;
    }
    // The next task, waiting for one; false once closed and empty.
    bool take(std::function<void()>& task) {
        std::unique_lock lock(mutex_);
        if (tasks_.empty() && !closed_) {
            const auto start = std::chrono::steady_clock::now();
            ready_.wait(lock, [&] { return !tasks_.empty() || closed_; });
            wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        if (tasks_.empty()) return false;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        return true;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_;
    bool closed_ = false, aborted_ = false;
    double wait_seconds_ = 0;
};

// One batch of the device's Forward: the survivors it took (longest first),
// their scores and rows, and the parser Backward of those past F3 where the
// device ran it too (backward's entry k is for passed[k]).
struct DeviceBatch {
    std::vector<std::size_t> positions;  // into past_viterbi
    ForwardScores forward;
    std::vector<std::size_t> passed;  // places in positions past F3, longest first
    BackwardScores backward;
    bool has_backward = false;
};

// A target past F3 whose envelopes wait for the device's rescoring.
struct PendingTarget {
    std::size_t position;  // into past_viterbi
    float fwdsc;
    TargetDomains domains;
};
// The targets each worker task finishes after the device's rescoring.
constexpr std::size_t kFinishGroup = 16;

// Forward, Backward and the domain stage of every survivor beside a device:
// one device thread (the scanner takes one caller at a time) runs Forward
// over the survivors short enough for it, a batch at a time, longest first,
// and Backward of each batch's targets past F3; the worker threads take the
// targets too long for the device first, then each batch's domain stages as
// soon as it is back. Where the device rescores envelopes, the worker threads
// hand it the envelopes they find and take waiting ones themselves when idle.
class DevicePipeline {
public:
    DevicePipeline(const ConfiguredProfile& profile, const std::vector<Candidate>& past_viterbi,
                   const ProfileTargets& targets, ProfileFilterScanner& scanner, const PipelineSettings& settings,
                   std::uint32_t seed, JobContext& context, std::vector<Slot>& slots, PipelineStages& stages)
        : profile_(profile),
          past_viterbi_(past_viterbi),
          targets_(targets),
          scanner_(scanner),
          settings_(settings),
          seed_(seed),
          context_(context),
          slots_(slots),
          stages_(stages) {}

    void run(std::vector<std::size_t> on_cpu, std::vector<std::size_t> on_device, std::size_t workers) {
        // The longest two per worker thread alone where the CPU groups rows, so
        // that the costliest domain stages do not queue behind each other.
        singles_ = paired_rows_available() ? 2 * workers : std::numeric_limits<std::size_t>::max();
        device_envelopes_ = scanner_.runs_envelopes();
        queue_cpu(std::move(on_cpu));
        std::future<void> device;
        if (on_device.empty()) queue_.close();
        else
            device = std::async(std::launch::async, [this, list = std::move(on_device)] {
                try {
                    feed(list);
                } catch (...) {
                    queue_.close(true);
                    throw;
                }
            });
        std::exception_ptr failure;
        try {
            parallel_for(
                workers, static_cast<int>(workers), [this](std::size_t) { work(); }, 1);
        } catch (...) {
            failure = std::current_exception();
        }
        if (device.valid()) {
            try {
                device.get();
            } catch (...) {
                if (!failure) failure = std::current_exception();
            }
        }
        stages_.worker_wait = queue_.wait_seconds();
        stages_.envelopes_on_cpu = envelopes_taken_;
        if (failure) std::rethrow_exception(failure);
    }

private:
    void work() {
        std::function<void()> task;
        try {
            while (queue_.take(task)) {
                context_.throw_if_cancelled();
                task();
            }
        } catch (...) {
            queue_.close(true);
            throw;
        }
    }

    // Positions scored whole on the worker threads (Forward there too), the
    // first singles_ of them alone, the rest in groups.
    void queue_cpu(std::vector<std::size_t> positions) {
        if (positions.empty()) return;
        auto shared = std::make_shared<const std::vector<std::size_t>>(std::move(positions));
        for (const WorkItem& item : items(shared->size()))
            queue_.push([this, shared, item] {
                const Candidate* c[kGroupTargets];
                Slot* out[kGroupTargets];
                for (int j = 0; j < item.n; ++j) {
                    const std::size_t position = (*shared)[item.first + static_cast<std::size_t>(j)];
                    c[j] = &past_viterbi_[position];
                    out[j] = &slots_[position];
                }
                score_targets(profile_, c, item.n, targets_, settings_, seed_, out);
            });
    }

    std::vector<WorkItem> items(std::size_t n) {
        std::vector<WorkItem> items;
        const std::size_t singles = std::min(singles_, n);
        for (std::size_t s = 0; s < singles; ++s) items.push_back({s, 1});
        for (std::size_t s = singles; s < n; s += kGroupTargets)
            items.push_back({s, static_cast<int>(std::min<std::size_t>(kGroupTargets, n - s))});
        // Only the longest (the first batch's) go alone where rows are grouped.
        if (singles_ != std::numeric_limits<std::size_t>::max()) singles_ = 0;
        return items;
    }

    // The device thread: Forward a batch at a time (batches double from
    // settings.device_batch to eight times that), F3, Backward of those past
    // it; where the device declines, the rest go to the worker threads whole.
    void feed(const std::vector<std::size_t>& on_device) {
        std::size_t first = 0, size = std::max<std::size_t>(1, settings_.device_batch);
        const std::size_t largest = 8 * size;
        while (first < on_device.size() && !queue_.aborted()) {
            const std::size_t end = std::min(on_device.size(), first + size);
            auto batch = std::make_shared<DeviceBatch>();
            batch->positions.assign(on_device.begin() + static_cast<std::ptrdiff_t>(first),
                                    on_device.begin() + static_cast<std::ptrdiff_t>(end));
            if (!device_forward(*batch)) {
                queue_cpu({on_device.begin() + static_cast<std::ptrdiff_t>(first), on_device.end()});
                break;
            }
            ++stages_.device_batches;
            queue_batch(batch);
            first = end;
            size = std::min(largest, 2 * size);
            if (device_envelopes_) rescore_pending(false);
        }
        // The envelopes of the last domain tasks, as they come.
        while (!queue_.aborted() && rescore_pending(true)) {
        }
        queue_.close();
    }

    // The device thread: the envelopes the worker threads have found, once
    // settings.device_envelopes of them wait, on the device, then their targets' last
    // step queued for the worker threads. With `drain`, waits for that many
    // (or for the domain tasks to end). False once no domain task is left:
    // what still waits then is the worker threads' (steal_pending).
    bool rescore_pending(bool drain) {
        std::vector<std::unique_ptr<PendingTarget>> taken;
        {
            std::unique_lock lock(pending_mutex_);
            const std::size_t want = std::max<std::size_t>(1, settings_.device_envelopes);
            if (drain)
                while (!queue_.aborted() && pending_envelopes_ < want && outstanding_ > 0)
                    pending_ready_.wait_for(lock, std::chrono::milliseconds(20));
            // Without the worker threads' help, the device takes the last ones too.
            const bool last = outstanding_ == 0 && !settings_.cpu_takes_envelopes;
            if (pending_.empty() || (pending_envelopes_ < want && !last)) return outstanding_ > 0;
            taken.swap(pending_);
            pending_envelopes_ = 0;
        }
        std::vector<EnvelopeJob> jobs;
        for (const auto& t : taken)
            for (std::size_t e = 0; e < t->domains.envelope_count(); ++e) {
                const TargetDomains::Span span = t->domains.envelope(e);
                jobs.push_back({past_viterbi_[t->position].target, span.i, span.j, span.wants_null2});
            }
        auto outcomes = std::make_shared<std::vector<EnvelopeOutcome>>();
        const auto start = std::chrono::steady_clock::now();
        const bool ran = device_envelopes_ && scanner_.rescore_envelopes(profile_.unihit, jobs, *outcomes, context_);
        stages_.device_envelopes += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (ran) stages_.envelopes_on_device += jobs.size();
        else
            device_envelopes_ = false;  // these, and the rest, on the CPU
        auto shared = std::make_shared<std::vector<std::unique_ptr<PendingTarget>>>(std::move(taken));
        std::size_t first_outcome = 0;
        for (std::size_t first = 0; first < shared->size(); first += kFinishGroup) {
            const std::size_t end = std::min(shared->size(), first + kFinishGroup);
            queue_.push([this, shared, outcomes, ran, first, end, first_outcome] {
                finish_targets(*shared, first, end, ran ? outcomes.get() : nullptr, first_outcome);
            });
            for (std::size_t k = first; k < end; ++k) first_outcome += (*shared)[k]->domains.envelope_count();
        }
        return true;
    }

    // A worker thread's share of the envelopes: up to `most` of the targets
    // still waiting for the device, rescored on the CPU. So the worker
    // threads and the device take the envelopes as each is free.
    void steal_pending(std::size_t most) {
        std::vector<std::unique_ptr<PendingTarget>> taken;
        {
            std::lock_guard lock(pending_mutex_);
            while (!pending_.empty() && taken.size() < most) {
                const std::size_t envelopes = pending_.back()->domains.envelope_count();
                pending_envelopes_ -= envelopes;
                envelopes_taken_ += envelopes;
                taken.push_back(std::move(pending_.back()));
                pending_.pop_back();
            }
        }
        if (taken.empty()) return;
        finish_targets(taken, 0, taken.size(), nullptr, 0);
    }

    // Targets [first, end) of `pending` rescored: from the device's outcomes
    // (from first_outcome on, in envelope order), or on the CPU.
    void finish_targets(std::vector<std::unique_ptr<PendingTarget>>& pending, std::size_t first, std::size_t end,
                        std::vector<EnvelopeOutcome>* outcomes, std::size_t first_outcome) {
        const FlushSubnormals flush;
        std::size_t o = first_outcome;
        for (std::size_t k = first; k < end; ++k) {
            PendingTarget& t = *pending[k];
            if (outcomes) {
                for (std::size_t e = 0; e < t.domains.envelope_count(); ++e, ++o) {
                    EnvelopeOutcome& out = (*outcomes)[o];
                    if (!out.error.empty()) throw Error(out.error);
                    RescoredEnvelope r;
                    r.envsc = out.env_score;
                    if (out.decoded) r.accuracy = out.accuracy;
                    r.trace = std::move(out.trace);
                    r.null2 = std::move(out.null2);
                    t.domains.rescored(e, std::move(r));
                }
            } else {
                t.domains.rescore_on_cpu();
            }
            DomainStage stage = t.domains.finish();
            slots_[t.position] =
                slot_of(past_viterbi_[t.position], targets_, profile_.plan7.statistics, settings_, t.fwdsc, stage);
        }
    }

    bool device_forward(DeviceBatch& batch) {
        auto start = std::chrono::steady_clock::now();
        const auto lap = [&start] {
            const auto now = std::chrono::steady_clock::now();
            const double seconds = std::chrono::duration<double>(now - start).count();
            start = now;
            return seconds;
        };
        std::vector<std::uint32_t> list(batch.positions.size());
        for (std::size_t d = 0; d < list.size(); ++d) list[d] = past_viterbi_[batch.positions[d]].target;
        const bool ran = scanner_.forward(profile_.multihit, list, batch.forward, context_);
        stages_.device_forward += lap();
        if (!ran) return false;
        for (std::size_t d = 0; d < batch.positions.size(); ++d)
            if (passes_forward(d, batch)) batch.passed.push_back(d);
        if (batch.passed.empty()) return true;
        std::vector<std::uint32_t> passed(batch.passed.begin(), batch.passed.end());
        batch.has_backward =
            scanner_.backward(profile_.multihit, list, batch.forward, passed, batch.backward, context_);
        stages_.device_backward += lap();
        return true;
    }

    // F3 on the device's score; where it could give none (NaN: underflow or
    // overflow), the CPU path's from the last row's C.
    bool passes_forward(std::size_t d, DeviceBatch& batch) const {
        ForwardScores& device = batch.forward;
        const Candidate& c = past_viterbi_[batch.positions[d]];
        if (std::isnan(device.scores[d])) {
            const int L = targets_.length(c.target);
            const float xC =
                device.specials[(device.first_row[d] + static_cast<std::size_t>(L)) * DpMatrix::Specials + DpMatrix::C];
            device.scores[d] = forward_score_of(LengthModel::for_target(L, true), xC, device.total_scale[d], L);
        }
        return profile::passes_forward(profile_.plan7.statistics, settings_, c, device.scores[d]);
    }

    // A batch's targets past F3 for the worker threads, in groups.
    void queue_batch(const std::shared_ptr<DeviceBatch>& batch) {
        for (const WorkItem& item : items(batch->passed.size())) {
            {
                std::lock_guard lock(pending_mutex_);
                ++outstanding_;
            }
            queue_.push([this, batch, item] {
                domains_of(*batch, item);
                {
                    std::lock_guard lock(pending_mutex_);
                    --outstanding_;
                }
                pending_ready_.notify_one();
            });
        }
    }

    // Backward (unless the device ran it) and the domain stage of a group of
    // a batch's targets past F3, from the device's rows.
    void domains_of(const DeviceBatch& batch, const WorkItem& item) {
        const FlushSubnormals flush;
        const ForwardProfile& om = profile_.multihit;
        thread_local DpMatrix fwd[kGroupTargets], bck[kGroupTargets];
        PairTarget t[kGroupTargets];
        DomainTarget domain_targets[kGroupTargets];
        float bcksc[kGroupTargets];
        bool cpu_backward[kGroupTargets] = {};
        for (int j = 0; j < item.n; ++j) {
            const std::size_t k = item.first + static_cast<std::size_t>(j), d = batch.passed[k];
            const int L = targets_.length(past_viterbi_[batch.positions[d]].target);
            load_device_forward(batch.forward, d, om.length, L, fwd[j]);
            if (batch.has_backward) {
                load_device_backward(batch.backward, k, om.length, L, bck[j]);
                // Where hmmsearch's Backward would have taken scale factors
                // of its own (or the device's gave no score), the CPU's.
                cpu_backward[j] = device_backward_needs_cpu(fwd[j], bck[j]);
            }
            t[j] = PairTarget{targets_.codes(past_viterbi_[batch.positions[d]].target), L,
                              LengthModel::for_target(L, true), &fwd[j], &bck[j]};
            domain_targets[j] = DomainTarget{t[j].dsq, L, &fwd[j], &bck[j]};
        }
        if (!batch.has_backward) backward_group(om, t, item.n, false, bcksc);
        for (int j = 0; j < item.n; ++j)
            if (cpu_backward[j]) (void)backward(om, t[j].length, t[j].dsq, t[j].L, fwd[j], bck[j], false);
        if (device_envelopes_) {
            defer_envelopes(batch, item, domain_targets);
            return;
        }
        std::vector<DomainStage> stages = define_domains(profile_, domain_targets, item.n, seed_, settings_.alignments);
        for (int j = 0; j < item.n; ++j) {
            const std::size_t d = batch.passed[item.first + static_cast<std::size_t>(j)];
            const std::size_t position = batch.positions[d];
            slots_[position] = slot_of(past_viterbi_[position], targets_, profile_.plan7.statistics, settings_,
                                       batch.forward.scores[d], stages[static_cast<std::size_t>(j)]);
        }
    }

    // A group's targets past F3 with their envelopes found, handed to the
    // device thread for rescoring.
    void defer_envelopes(const DeviceBatch& batch, const WorkItem& item, const DomainTarget* domain_targets) {
        std::vector<std::unique_ptr<PendingTarget>> found;
        std::size_t envelopes = 0;
        for (int j = 0; j < item.n; ++j) {
            const std::size_t d = batch.passed[item.first + static_cast<std::size_t>(j)];
            auto t = std::make_unique<PendingTarget>(
                PendingTarget{batch.positions[d], batch.forward.scores[d],
                              TargetDomains(profile_, domain_targets[j].dsq, domain_targets[j].L, seed_,
                                            settings_.alignments)});
            t->domains.find_envelopes(*domain_targets[j].fwd, *domain_targets[j].bck);
            envelopes += t->domains.envelope_count();
            found.push_back(std::move(t));
        }
        const std::size_t n = found.size();
        {
            std::lock_guard lock(pending_mutex_);
            for (auto& t : found) pending_.push_back(std::move(t));
            pending_envelopes_ += envelopes;
        }
        if (settings_.cpu_takes_envelopes) queue_.push([this, n] { steal_pending(n); });
    }

    const ConfiguredProfile& profile_;
    const std::vector<Candidate>& past_viterbi_;
    const ProfileTargets& targets_;
    ProfileFilterScanner& scanner_;
    const PipelineSettings& settings_;
    std::uint32_t seed_;
    JobContext& context_;
    std::vector<Slot>& slots_;
    PipelineStages& stages_;
    TaskQueue queue_;
    std::size_t singles_ = 0;
    // The envelopes' rescoring on the device (while it answers yes): targets
    // whose envelopes wait, and the domain tasks queued or running.
    std::atomic<bool> device_envelopes_{false};
    std::mutex pending_mutex_;
    std::condition_variable pending_ready_;
    std::vector<std::unique_ptr<PendingTarget>> pending_;
    std::size_t pending_envelopes_ = 0, outstanding_ = 0;
    std::uint64_t envelopes_taken_ = 0;  // by the worker threads (under pending_mutex_)
};

// Forward, Backward and the domain stage of every survivor, longest first:
// on the worker threads, and with a device Forward beside them (see
// DevicePipeline).
void score_survivors(const ConfiguredProfile& profile, const std::vector<Candidate>& past_viterbi,
                     const ProfileTargets& targets, ProfileFilterScanner& scanner, const PipelineSettings& settings,
                     std::uint32_t seed, JobContext& context, std::vector<Slot>& slots, PipelineStages& stages) {
    const std::size_t n = past_viterbi.size();
    std::vector<std::size_t> order(n), on_cpu, on_device;
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Longest first: their costs differ by orders of magnitude.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return targets.length(past_viterbi[a].target) > targets.length(past_viterbi[b].target);
    });
    const int device_length = settings.device_length_for(profile.multihit.length);
    for (std::size_t s : order) {
        const bool short_enough = targets.length(past_viterbi[s].target) <= device_length;
        (scanner.runs_forward() && short_enough ? on_device : on_cpu).push_back(s);
    }
    const std::size_t workers = settings.threads > 0 ? static_cast<std::size_t>(settings.threads)
                                                     : std::max(1u, std::thread::hardware_concurrency());
    DevicePipeline pipeline(profile, past_viterbi, targets, scanner, settings, seed, context, slots, stages);
    pipeline.run(std::move(on_cpu), std::move(on_device), workers);
}

// Z targets, then domZ = the number of reported targets: which sequences and
// domains are reported and included, best first.
void apply_thresholds(ModelSearch& result, const PipelineSettings& settings, std::size_t n) {
    result.Z = settings.Z ? *settings.Z : static_cast<double>(n);
    const bool by_E = !settings.report_T, inc_by_E = !settings.include_T;
    const bool dom_by_E = !settings.domain_T, incdom_by_E = !settings.include_domain_T;
    std::stable_sort(result.hits.begin(), result.hits.end(), [&](const TargetHit& a, const TargetHit& b) {
        const double ka = inc_by_E ? -a.lnP : a.score, kb = inc_by_E ? -b.lnP : b.score;
        if (ka != kb) return ka > kb;
        if (a.name != b.name) return a.name < b.name;
        return a.target < b.target;
    });
    for (auto& hit : result.hits) {
        const double E = std::exp(hit.lnP) * result.Z;
        hit.reported = by_E ? E <= settings.report_E : hit.score >= *settings.report_T;
        if (hit.reported) hit.included = inc_by_E ? E <= settings.include_E : hit.score >= *settings.include_T;
        result.reported += hit.reported;
        result.included += hit.included;
    }
    result.domZ = settings.domZ ? *settings.domZ : static_cast<double>(result.reported);
    for (auto& hit : result.hits) {
        if (!hit.reported) continue;
        for (auto& d : hit.domains) {
            const double E = std::exp(d.lnP) * result.domZ;
            d.reported = dom_by_E ? E <= settings.domain_E : d.score >= *settings.domain_T;
            d.included =
                hit.included && (incdom_by_E ? E <= settings.include_domain_E : d.score >= *settings.include_domain_T);
            hit.reported_domains += d.reported;
            hit.included_domains += d.included;
        }
    }
}

}  // namespace

ModelSearch search_profile(const ProfileHmm& hmm, const ProfileTargets& targets, ProfileFilterScanner& scanner,
                           const PipelineSettings& settings, JobContext& context) {
    const auto start = std::chrono::steady_clock::now();
    if (hmm.alphabet != targets.alphabet)
        throw Error(hmm.path + ": model '" + hmm.name + "' is " + std::string(ResidueCode::of(hmm.alphabet).name()) +
                    " but the targets were read as " + std::string(ResidueCode::of(targets.alphabet).name()));
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);

    ModelSearch result;
    result.name = hmm.name;
    result.accession = hmm.accession;
    result.description = hmm.description;
    result.model_length = hmm.length;
    PipelineCounts& counts = result.counts;
    counts.targets = targets.size();
    counts.residues = targets.residue_count();
    const std::vector<Candidate> past_viterbi =
        run_filters(profile, null_model, targets, scanner, settings, context, counts, result.stages);

    // Seed 0: an arbitrary one for this run (as hmmsearch --seed 0).
    const std::uint32_t seed = settings.seed != 0 ? settings.seed : (std::random_device{}() | 1u);
    std::vector<Slot> slots(past_viterbi.size());
    StageClock clock;
    score_survivors(profile, past_viterbi, targets, scanner, settings, seed, context, slots, result.stages);
    result.stages.survivors = clock.lap();
    for (std::size_t s = 0; s < slots.size(); ++s) {
        Slot& slot = slots[s];
        if (!slot.past_forward) continue;
        ++counts.past_forward;
        counts.residues_past_forward += static_cast<std::uint64_t>(targets.length(past_viterbi[s].target));
        counts.regions += static_cast<std::uint64_t>(slot.regions);
        counts.clustered += static_cast<std::uint64_t>(slot.clustered);
        counts.overlaps += static_cast<std::uint64_t>(slot.overlaps);
        counts.envelopes += static_cast<std::uint64_t>(slot.envelopes);
        counts.domains += static_cast<std::uint64_t>(slot.domains);
        if (slot.hit) result.hits.push_back(std::move(*slot.hit));
    }
    apply_thresholds(result, settings, targets.size());
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace alignscope::profile
