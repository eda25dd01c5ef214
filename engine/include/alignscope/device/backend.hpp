// The device abstraction: a Backend aligns a PairJob on one device (or a group
// of them) and a DeviceRegistry knows every backend. The engine registers its
// CPU backends ("cpu-ref", "cpu"); the app registers the CUDA backend from
// kernels/ at start-up, so nothing above the engine sees CUDA.
#pragma once

#include <alignscope/device/job.hpp>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace alignscope {

namespace longpair {
class PassRunner;
}

// How a GPU runs the long-pair passes (see align/long_pair.hpp).
struct LongRunnerSettings {
    // "strips": one persistent kernel whose warps take row strips in order;
    // "streams": `kernels` kernels on `streams` streams share the strips (the
    // Liverpool design: the timeline shows them overlap). Empty = "strips".
    std::string strategy;
    int kernels = 0;                      // 0 = backend default
    int streams = 0;                      // 0 = backend default
    std::uint64_t gpu_memory_budget = 0;  // bytes; 0 = backend default
    std::string kernel;                   // force a variant by name; empty = automatic
    // Several GPUs (one pair's columns split among them, longpair::SplitSettings):
    int split_slices = 0;               // column slices per GPU; 0 = 1
    std::int64_t split_block_rows = 0;  // rows per pipeline block; 0 = what fills a GPU
};

struct DeviceInfo {
    std::string id;           // "cpu-ref", "cpu", "gpu:0", ...
    std::string kind;         // "cpu" or "gpu"
    std::string name;         // e.g. "CPU reference (scalar)", "NVIDIA H100 80GB HBM3"
    std::string description;  // one line: backend, SIMD level, threads
    bool available = true;
    std::string unavailable_reason;  // why not, when !available
    int threads = 0;                 // CPU worker threads
    int sm_count = 0;                // GPU
    std::uint64_t memory_bytes = 0;  // GPU global memory
    int compute_major = 0, compute_minor = 0;
    std::string driver_version, runtime_version;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual DeviceInfo info() const = 0;
    // Aligns every pair; results in pair order with device/kernel filled in.
    // Throws Error (with the device named) or Cancelled.
    virtual std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) = 0;
    // The same results into `results`, a buffer the caller keeps from job to
    // job (a streamed job's chunks, bench's repeats): resized to the job's
    // pairs, every field of every element written as align_pairs would
    // return it. What the elements held before is only storage to reuse (the
    // vector's pages, their strings' and CIGARs' capacity), never a value.
    // After an error the buffer's contents are unspecified. The default moves
    // align_pairs's vector in; backends that write results in place override
    // it to skip the new vector and its allocations.
    virtual void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results);
    // Makes ready what a first job would (a GPU's context and streams), so
    // that it is off that job's critical path: the pair pipeline calls it on
    // a thread of its own while it reads the input. Throws Error as
    // align_pairs would. The CPU backends have nothing to make ready.
    virtual void warm_up() {}
    // The long-pair pass runner of this device, or null when the device has
    // none (the CPU backends: long pairs there use align_linear_space).
    virtual std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings);
};

class DeviceRegistry {
public:
    // Makes one backend from several of the same kind (multi-GPU).
    using GroupFactory = std::function<std::unique_ptr<Backend>(std::vector<Backend*>)>;

    void add(std::unique_ptr<Backend> backend);
    // A device kind that exists but cannot be used, and why (shown by `devices`).
    void add_unavailable(DeviceInfo info);
    void set_gpu_group_factory(GroupFactory factory);
    // A registration that takes time (a GPU driver starting takes a fifth of
    // a second) runs from now on a thread of its own, into a registry of its
    // own; devices() and select() wait for it, except select() of a CPU
    // device. Its errors come from the first of them that waits.
    void defer(std::function<void(DeviceRegistry&)> registration);

    std::vector<DeviceInfo> devices() const;
    // "cpu-ref", "cpu", "gpu" (all GPUs), "gpu:N", "gpu:0,2", "auto" (all GPUs if
    // any, else "cpu"). Throws Error naming `flag` (the option that gave the
    // spec) and listing what exists.
    Backend& select(std::string_view spec, std::string_view flag = "--device");

private:
    // Moves a deferred registration's devices in, once it is done.
    void settle() const;

    // Mutable: settle() fills them from a deferred registration, also for a
    // const devices().
    mutable std::vector<std::unique_ptr<Backend>> backends_;
    mutable std::vector<DeviceInfo> unavailable_;
    mutable std::future<std::unique_ptr<DeviceRegistry>> deferred_;
    // Multi-GPU groups made by select(), kept by their canonical spec ("gpu:0,2")
    // so that selecting the same set again returns the same backend.
    std::vector<std::pair<std::string, std::unique_ptr<Backend>>> groups_;
    mutable GroupFactory group_factory_;
};

// A registry holding the engine's CPU backends: "cpu-ref" (the scalar reference,
// threaded over pairs) and "cpu" (parasail SIMD, threaded over pairs).
std::unique_ptr<DeviceRegistry> make_cpu_registry();

}  // namespace alignscope
