// Terminal progress line and cancellation by SIGINT, SIGTERM or SIGHUP.
#include "cli_progress.hpp"

#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace alignscope::cli {
namespace {

CancellationToken g_interrupt;
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int signal) {
    if (g_signal == 0) g_signal = signal;
    g_interrupt.cancel();
    std::signal(signal, SIG_DFL);  // a second one ends the process at once
}

}  // namespace

const CancellationToken& interrupt_token() {
    // Ctrl-C, kill's default and a closed terminal all end the job the same
    // way: between steps, temporary files removed, older outputs untouched.
    static const bool installed = [] {
        for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, on_stop_signal);
        return true;
    }();
    (void)installed;
    return g_interrupt;
}

int interrupt_exit_status() { return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT); }

TerminalProgress::TerminalProgress(std::string label, Unit unit)
    : label_(std::move(label)),
      unit_(unit),
      enabled_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

TerminalProgress::~TerminalProgress() { finish(); }

void TerminalProgress::operator()(const Progress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double fraction = p.cells_total ? double(p.cells_done) / double(p.cells_total) : 0.0;
    const double gcups = seconds > 0 ? double(p.cells_done) / seconds / 1e9 : 0.0;
    const double eta = fraction > 0 ? seconds * (1 - fraction) / fraction : 0.0;
    if (unit_ == Unit::Cells) {
        auto scaled = [](double cells, const char** suffix) {
            static const char* names[] = {"", "k", "M", "G", "T", "P"};
            int k = 0;
            while (cells >= 1000 && k < 5) cells /= 1000, ++k;
            *suffix = names[k];
            return cells;
        };
        const char *done_suffix = "", *total_suffix = "";
        const double done = scaled(double(p.cells_done), &done_suffix);
        const double total = scaled(double(p.cells_total), &total_suffix);
        std::fprintf(stderr, "\r%s: %5.1f%%  %.1f%s/%.1f%s cells  %.2f GCUPS  ETA %.0f s   ", label_.c_str(),
                     100 * fraction, done, done_suffix, total, total_suffix, gcups, eta);
    } else {
        std::fprintf(stderr, "\r%s: %5.1f%%  %llu/%llu pairs  %.2f GCUPS  ETA %.0f s   ", label_.c_str(),
                     100 * fraction, static_cast<unsigned long long>(p.items_done),
                     static_cast<unsigned long long>(p.items_total), gcups, eta);
    }
    shown_ = true;
}

void TerminalProgress::finish() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
}

}  // namespace alignscope::cli
