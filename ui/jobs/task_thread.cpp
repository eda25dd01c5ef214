// TaskThread: a mutex-and-condition-variable task loop.
#include "jobs/task_thread.hpp"

namespace alignscope::ui {

TaskThread::TaskThread() : thread_([this] { loop(); }) {}

TaskThread::~TaskThread() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void TaskThread::post(std::function<void()> task) {
    {
        std::lock_guard lock(mutex_);
        tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
}

bool TaskThread::busy() const {
    std::lock_guard lock(mutex_);
    return running_task_ || !tasks_.empty();
}

void TaskThread::loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping and drained
        auto task = std::move(tasks_.front());
        tasks_.pop_front();
        running_task_ = true;
        lock.unlock();
        task();
        lock.lock();
        running_task_ = false;
    }
}

}  // namespace alignscope::ui
