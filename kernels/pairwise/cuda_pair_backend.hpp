// The CUDA backend of one GPU: aligns a PairJob in batches that fit the memory
// budget, on a pool of streams, with the passes of pass_types.hpp, and returns
// Alignments identical in score and coordinates to the CPU reference. Pairs
// whose DP the 32-bit passes cannot hold (pass_bounds.hpp) run on the exact
// CPU path in the same job.
#pragma once

#include <alignscope/device/backend.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace alignscope::kernels {

struct CudaDevice {
    int index = 0;    // CUDA device ordinal
    DeviceInfo info;  // id "gpu:N", name, SMs, memory, versions
};

struct PinnedStaging;  // one stream's page-locked staging buffers (cuda_pair_backend.cpp)
struct StreamSlot;     // one stream's staging, device buffers and event (cuda_pair_backend.cpp)
struct CudaSite;
class StreamPool;
class PairRun;  // the stages of one job (cuda_pair_backend.cpp)

class CudaPairBackend : public Backend {
public:
    explicit CudaPairBackend(CudaDevice device);
    ~CudaPairBackend() override;
    DeviceInfo info() const override { return device_.info; }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override;
    // The context and the default streams, made before the first job needs them.
    void warm_up() override;
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings) override;
    int device_index() const { return device_.index; }

private:
    friend class PairRun;
    // The exact CPU path for pairs the 32-bit passes cannot hold: device
    // cpu-ref (the 64-bit reference), made at its first use.
    Backend& exact_cpu_path();

    CudaDevice device_;
    std::mutex mutex_;  // one job at a time on a device
    // The job's streams, kept for the next job with as many.
    StreamPool& stream_pool(int count, const CudaSite& site);
    // Slots kept from job to job (up to a cap): pinning a few hundred
    // megabytes of host memory, or allocating device buffers, takes longer
    // than a batch of kernels, so the next job (the next chunk of a streamed
    // job, a bench repeat, the next GUI run) reuses them.
    std::vector<std::unique_ptr<StreamSlot>> kept_slots_;
    std::unique_ptr<StreamPool> streams_;
    std::unique_ptr<DeviceRegistry> cpu_devices_;
};

}  // namespace alignscope::kernels
