// Terminal progress and Ctrl-C for long CLI jobs: a one-line progress display on
// stderr (only when stderr is a terminal) and a cancellation token that the
// first SIGINT, SIGTERM or SIGHUP sets (a second one kills the process as usual).
#pragma once

#include <alignscope/device/job.hpp>

#include <chrono>
#include <string>

namespace alignscope::cli {

// Installs the SIGINT, SIGTERM and SIGHUP handlers on first use.
const CancellationToken& interrupt_token();
// The exit status of a job the signal cancelled: 128 + its number (130 for Ctrl-C).
int interrupt_exit_status();

class TerminalProgress {
public:
    // Pairs: "N/M pairs"; cells (one long pair): "12.3G/45.6G cells".
    enum class Unit { Pairs, Cells };
    explicit TerminalProgress(std::string label, Unit unit = Unit::Pairs);
    ~TerminalProgress();
    void operator()(const Progress& progress);
    void finish();

private:
    std::string label_;
    Unit unit_;
    bool enabled_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace alignscope::cli
