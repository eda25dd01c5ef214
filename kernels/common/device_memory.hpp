// Device and pinned host memory that releases itself (RAII), so a job that
// fails half-way leaves nothing allocated. Buffers grow on demand and are
// reused from batch to batch; they never shrink during a job.
#pragma once

#include "common/cuda_check.hpp"
#include "common/fault_injection.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace alignscope::kernels {

// Where a buffer lives: how it is allocated and freed, and whether the host may
// touch its elements.
struct DeviceMemory {
    static constexpr const char* allocate_call = "cudaMalloc";
    static constexpr bool host_accessible = false;
    static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
    static void free(void* p) noexcept { (void)cudaFree(p); }
};
// Page-locked host memory: copies from and to it run asynchronously and at
// full PCIe/NVLink speed.
struct PinnedHostMemory {
    static constexpr const char* allocate_call = "cudaMallocHost";
    static constexpr bool host_accessible = true;
    static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
    static void free(void* p) noexcept { (void)cudaFreeHost(p); }
};

template <typename T, typename Memory>
class CudaBuffer {
public:
    CudaBuffer() = default;
    ~CudaBuffer() { release(); }
    CudaBuffer(const CudaBuffer&) = delete;
    CudaBuffer& operator=(const CudaBuffer&) = delete;
    CudaBuffer(CudaBuffer&& other) noexcept { swap(other); }
    CudaBuffer& operator=(CudaBuffer&& other) noexcept {
        swap(other);
        return *this;
    }

    // Makes room for `count` elements; the contents are lost when it grows.
    void reserve(std::size_t count, const CudaSite& site) {
        if (count <= capacity_) return;
        release();
        void* p = nullptr;
        cudaError_t status = fault::before_allocation();  // a test's injected failure (ALIGNSCOPE_FAULT)
        if (status == cudaSuccess) status = Memory::allocate(&p, count * sizeof(T));
        check_cuda(status, Memory::allocate_call, site);
        data_ = static_cast<T*>(p);
        capacity_ = count;
    }
    void release() noexcept {
        if (data_) Memory::free(data_);
        data_ = nullptr;
        capacity_ = 0;
    }
    T* data() const { return data_; }
    std::size_t capacity() const { return capacity_; }
    std::size_t bytes() const { return capacity_ * sizeof(T); }
    T& operator[](std::size_t k) const requires Memory::host_accessible { return data_[k]; }

private:
    void swap(CudaBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(capacity_, other.capacity_);
    }
    T* data_ = nullptr;
    std::size_t capacity_ = 0;
};

template <typename T>
using DeviceBuffer = CudaBuffer<T, DeviceMemory>;
template <typename T>
using PinnedBuffer = CudaBuffer<T, PinnedHostMemory>;

}  // namespace alignscope::kernels
