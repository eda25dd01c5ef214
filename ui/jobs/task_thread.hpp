// One background thread that runs posted tasks in order: the job queue and the
// file loader each own one, so a long job never delays a file load and neither
// ever runs on the GUI thread. Tasks report back by queued calls into the GUI.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace alignscope::ui {

class TaskThread {
public:
    TaskThread();
    // Runs the tasks already posted, then joins. Owners cancel long tasks first.
    ~TaskThread();
    TaskThread(const TaskThread&) = delete;
    TaskThread& operator=(const TaskThread&) = delete;

    void post(std::function<void()> task);
    // True while a task runs or waits.
    bool busy() const;

private:
    void loop();

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> tasks_;
    bool running_task_ = false;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace alignscope::ui
