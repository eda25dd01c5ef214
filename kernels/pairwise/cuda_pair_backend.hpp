// The CUDA backend of one GPU: aligns a PairJob in batches that fit the memory
// budget, on a pool of streams, with the passes of pass_types.hpp, and returns
// Alignments identical in score and coordinates to the CPU reference.
#pragma once

#include <alignscope/device/backend.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace alignscope::kernels {

struct CudaDevice {
    int index = 0;       // CUDA device ordinal
    DeviceInfo info;     // id "gpu:N", name, SMs, memory, versions
};

struct PinnedStaging;  // one stream's page-locked staging buffers (cuda_pair_backend.cpp)

class CudaPairBackend : public Backend {
public:
    explicit CudaPairBackend(CudaDevice device);
    ~CudaPairBackend() override;
    DeviceInfo info() const override { return device_.info; }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override;
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings) override;
    int device_index() const { return device_.index; }

private:
    CudaDevice device_;
    std::mutex mutex_;  // one job at a time on a device
    // Staging kept from job to job (up to a cap): pinning a few hundred
    // megabytes of host memory takes longer than a batch of kernels, so the
    // next job (a bench repeat, the next GUI run) reuses it.
    std::vector<std::unique_ptr<PinnedStaging>> staging_;
};

}  // namespace alignscope::kernels
