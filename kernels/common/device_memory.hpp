// Device and pinned host memory that releases itself (RAII), so a job that
// fails half-way leaves nothing allocated. Buffers grow on demand and are
// reused from batch to batch; they never shrink during a job.
#pragma once

#include "common/cuda_check.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace alignscope::kernels {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        swap(other);
        return *this;
    }

    // Makes room for `count` elements; the contents are lost when it grows.
    void reserve(std::size_t count, const CudaSite& site) {
        if (count <= capacity_) return;
        release();
        void* p = nullptr;
        check_cuda(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc", site);
        data_ = static_cast<T*>(p);
        capacity_ = count;
    }
    void release() noexcept {
        if (data_) (void)cudaFree(data_);
        data_ = nullptr;
        capacity_ = 0;
    }
    T* data() const { return data_; }
    std::size_t capacity() const { return capacity_; }
    std::size_t bytes() const { return capacity_ * sizeof(T); }

private:
    void swap(DeviceBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(capacity_, other.capacity_);
    }
    T* data_ = nullptr;
    std::size_t capacity_ = 0;
};

// Page-locked host memory: copies from and to it run asynchronously and at
// full PCIe/NVLink speed.
template <typename T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    ~PinnedBuffer() { release(); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& other) noexcept { swap(other); }
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        swap(other);
        return *this;
    }

    void reserve(std::size_t count, const CudaSite& site) {
        if (count <= capacity_) return;
        release();
        void* p = nullptr;
        check_cuda(cudaMallocHost(&p, count * sizeof(T)), "cudaMallocHost", site);
        data_ = static_cast<T*>(p);
        capacity_ = count;
    }
    void release() noexcept {
        if (data_) (void)cudaFreeHost(data_);
        data_ = nullptr;
        capacity_ = 0;
    }
    T* data() const { return data_; }
    std::size_t capacity() const { return capacity_; }
    T& operator[](std::size_t k) const { return data_[k]; }

private:
    void swap(PinnedBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(capacity_, other.capacity_);
    }
    T* data_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace alignscope::kernels
