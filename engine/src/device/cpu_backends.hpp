// The engine's two CPU backends ("cpu-ref" scalar reference, "cpu" parasail
// SIMD) and the worker pool they share: std::jthreads pull small blocks of pair
// indices from an atomic counter; each block a worker runs becomes one timeline
// event on that worker's lane.
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace alignscope {

std::unique_ptr<Backend> make_cpu_reference_backend();
std::unique_ptr<Backend> make_parasail_backend();

// Worker threads a job asks for: job.threads, or every hardware thread.
int cpu_worker_count(const PairJob& job);

// A kernel of a CPU backend: its family and lane width. Its name for a job
// (job_kernel) takes the job's mode and gap model.
struct ForcedKernel {
    std::string family;
    KernelWidth width = KernelWidth::S32;
};
KernelName job_kernel(const PairJob& job, const ForcedKernel& kernel);

// The kernel a job forces (PairJob::kernel); nullopt when the job leaves the
// choice to the backend. `runs` are the kernels the device has. Throws Error
// naming --kernel when the name is malformed, does not fit the job's mode and
// gap model, or is not one of the device's.
std::optional<ForcedKernel> forced_kernel(const PairJob& job, const std::string& device,
                                          const std::vector<ForcedKernel>& runs);

// Given by the pool to an aligner for one pair. An aligner that works on a pair
// for long calls cells_done now and then (cells of this pair so far); that
// reports progress and throws Cancelled once the job is cancelled.
class PairProgress {
public:
    virtual ~PairProgress() = default;
    virtual void cells_done(std::uint64_t cells_so_far) = 0;
    virtual bool stop_requested() const = 0;
};

// One per worker thread, so it may keep per-thread state (profiles, buffers).
class PairAligner {
public:
    virtual ~PairAligner() = default;
    // Aligns one pair; fills every field of the result but query/target ids and
    // device, which the pool sets.
    virtual Alignment align(const Sequence& query, const Sequence& target, PairProgress& progress) = 0;
};

// Runs every pair of `job` on cpu_worker_count(job) threads, each with its own
// aligner from `make_aligner`. Results in pair order with device = `device`.
// Progress goes to context at most every 50 ms; cancellation is checked before
// every pair. Errors name the device and the pair.
std::vector<Alignment> align_pairs_on_workers(const PairJob& job, JobContext& context, const std::string& device,
                                              const std::function<std::unique_ptr<PairAligner>()>& make_aligner);
// The same into a buffer the caller keeps (Backend::align_pairs_into): resized
// to the job's pairs, every element overwritten, its ids' and device's
// storage reused.
void align_pairs_on_workers(const PairJob& job, JobContext& context, const std::string& device,
                            const std::function<std::unique_ptr<PairAligner>()>& make_aligner,
                            std::vector<Alignment>& results);

}  // namespace alignscope
