// The CUDA backend of one GPU: aligns a PairJob in batches that fit the memory
// budget, on a pool of streams, with the passes of pass_types.hpp, and returns
// Alignments identical in score and coordinates to the CPU reference. Pairs
// whose DP the 32-bit passes cannot hold (pass_bounds.hpp) run on the exact
// CPU path in the same job.
#pragma once

#include <alignscope/device/backend.hpp>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace alignscope::kernels {

struct CudaDevice {
    int index = 0;    // CUDA device ordinal
    DeviceInfo info;  // id "gpu:N", name, SMs, memory, versions
};

struct PinnedStaging;  // one stream's page-locked staging buffers (cuda_pair_backend.cpp)
struct StreamSlot;     // a stream with its staging, device buffers and event (cuda_pair_backend.cpp)
struct MatrixTable;    // a substitution table on the device (cuda_pair_backend.cpp)
struct CudaSite;
class PairRun;   // the stages of one job (cuda_pair_backend.cpp)
class PairPlan;  // a job's (or part's) work lists and batches (pair_plan.hpp)

// Jobs may run at once from several threads (the pair pipeline aligns chunk
// k+1 while chunk k's kernels run): each job encodes, plans and packs on its
// own thread and takes stream slots from a pool the backend shares, so one
// job's copies and host work overlap another's kernels. A large job can run
// itself that way, as parts of consecutive pairs (ALIGNSCOPE_GPU_PART_PAIRS).
class CudaPairBackend : public Backend {
public:
    explicit CudaPairBackend(CudaDevice device);
    ~CudaPairBackend() override;
    DeviceInfo info() const override { return device_.info; }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override;
    // Into the caller's buffer, in place: where it is the job's size already
    // no vector is made or faulted in, and its elements' strings and CIGARs
    // keep their storage.
    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override;
    // The context and the default streams, made before the first job needs them.
    void warm_up() override;
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings) override;
    int device_index() const { return device_.index; }

private:
    friend class PairRun;
    // The exact CPU path for pairs the 32-bit passes cannot hold: device
    // cpu-ref (the 64-bit reference), made at its first use.
    Backend& exact_cpu_path();
    // A large job as parts aligned at once (cuda_pair_backend.cpp: kPartPairs).
    void align_in_parts(const PairJob& job, JobContext& context, std::size_t part, std::vector<Alignment>& out);

    // A free slot of the pool, or a new one while the pool holds fewer than
    // `streams`; with `wait`, blocks until another job returns one, else
    // returns null. The thread has the device set.
    StreamSlot* acquire_slot(int streams, bool wait, const CudaSite& site);
    // Back into the pool, idle; past kKeptStagingBytes of pinned or
    // kept_device_bytes of device memory in all slots (at least 4 GiB, an
    // eighth of the device), its buffers go.
    void release_slot(StreamSlot* slot);
    // Device bytes of every slot, free or taken (a taken one as it was when
    // last returned): memory a job's batches may count on.
    std::uint64_t slot_device_bytes();
    // The (query, target) lengths vector of an earlier job, the one with the
    // most room (empty when none is kept), and back when the job ends: a
    // million pairs' are 16 MB whose fresh pages would be faulted in on the
    // job's thread before its first kernel.
    std::vector<std::pair<std::int64_t, std::int64_t>> take_lengths();
    void keep_lengths(std::vector<std::pair<std::int64_t, std::int64_t>>&& lengths);
    // A plan an earlier job is done with, for PairPlan::make_range to reuse
    // the storage of: the one with the least room for at least `pairs`
    // pairs, else the roomiest (empty when none is kept); and back when the
    // job ends (a million pairs' plans are 24 MB), within kKeptPlanPairs.
    PairPlan take_plan(std::size_t pairs);
    void keep_plan(PairPlan&& plan);
    // The substitution table on the device, uploaded once per distinct table.
    const std::int32_t* matrix_table(const std::vector<std::int32_t>& table, const CudaSite& site);

    CudaDevice device_;
    std::mutex mutex_;  // the slot pool, the tables and the exact CPU path
    std::condition_variable slot_returned_;
    // Slots kept from job to job: pinning a few hundred megabytes of host
    // memory, or allocating device buffers, takes longer than a batch of
    // kernels, so the next job (the next chunk of a streamed job, a bench
    // repeat, the next GUI run) reuses them. A slot's lane is its index.
    std::vector<std::unique_ptr<StreamSlot>> slots_;
    std::vector<StreamSlot*> free_slots_;
    std::vector<std::unique_ptr<MatrixTable>> tables_;
    static constexpr std::size_t kKeptLengthVectors = 4;                   // jobs at once that find one
    static constexpr std::size_t kKeptLengthPairs = std::size_t{4} << 20;  // 64 MB each at most
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> kept_lengths_;
    static constexpr std::size_t kKeptPlans = 32;
    static constexpr std::size_t kKeptPlanPairs = std::size_t{8} << 20;  // room in all of them: about 200 MB
    std::vector<PairPlan> kept_plans_;
    std::unique_ptr<DeviceRegistry> cpu_devices_;
};

}  // namespace alignscope::kernels
