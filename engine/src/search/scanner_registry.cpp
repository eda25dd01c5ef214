// The scanner registry (the --device grammar, as DeviceRegistry::select reads
// it) and the split scanner that spreads one database over several devices.
#include <alignscope/error.hpp>
#include <alignscope/search/scan.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

namespace alignscope {

void ScannerRegistry::add(DeviceInfo info, Factory factory, Capability capability) {
    if (!factory) throw Error("scanner registry: no factory for '" + info.id + "'");
    for (const Entry& e : entries_)
        if (e.info.id == info.id)
            throw Error("scanner registry: a scanner for '" + info.id + "' is already registered");
    entries_.push_back({std::move(info), std::move(factory), std::move(capability)});
}

void ScannerRegistry::add_unavailable(DeviceInfo info) {
    info.available = false;
    unavailable_.push_back(std::move(info));
}

std::vector<DeviceInfo> ScannerRegistry::devices() const {
    std::vector<DeviceInfo> all;
    for (const Entry& e : entries_) all.push_back(e.info);
    for (const DeviceInfo& u : unavailable_) all.push_back(u);
    return all;
}

bool ScannerRegistry::has(std::string_view id) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.info.id == id; });
}

namespace {

std::string trimmed_lower(std::string_view text) {
    std::string out;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    return out;
}

}  // namespace

std::vector<std::string> ScannerRegistry::resolve(std::string_view spec_text, std::string_view flag) const {
    const std::string spec = trimmed_lower(spec_text);
    auto listing = [this]() {
        std::string text = "devices that can scan: ";
        for (std::size_t k = 0; k < entries_.size(); ++k) text += (k ? ", " : "") + entries_[k].info.id;
        if (entries_.empty()) text += "none";
        if (!unavailable_.empty()) {
            text += "; unavailable: ";
            for (std::size_t k = 0; k < unavailable_.size(); ++k)
                text += (k ? ", " : "") + unavailable_[k].id + " (" + unavailable_[k].unavailable_reason + ")";
        }
        return text;
    };
    auto fail = [&](const std::string& why) {
        return Error(std::string(flag) + " '" + std::string(spec_text) + "': " + why + "; " + listing());
    };
    std::vector<std::string> gpus;
    for (const Entry& e : entries_)
        if (e.info.kind == "gpu") gpus.push_back(e.info.id);

    if (spec == "auto") {
        if (!gpus.empty()) return gpus;
        if (has("cpu")) return {"cpu"};
        throw fail("no device can scan");
    }
    if (spec == "gpu") {
        if (gpus.empty()) throw fail("no usable GPU");
        return gpus;
    }
    if (spec.rfind("gpu:", 0) == 0 && spec.find(',') != std::string::npos) {
        std::vector<std::string> ids;
        std::string rest = spec.substr(4);
        std::size_t start = 0;
        while (start <= rest.size()) {
            const std::size_t comma = std::min(rest.find(',', start), rest.size());
            const std::string number = rest.substr(start, comma - start);
            if (number.empty() || !std::all_of(number.begin(), number.end(),
                                               [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
                throw fail("expected gpu:N or gpu:N,M,...");
            const std::string id = "gpu:" + std::to_string(std::stoul(number));
            if (!has(id)) throw fail("there is no " + id);
            if (std::find(ids.begin(), ids.end(), id) != ids.end()) throw fail(id + " is named twice");
            ids.push_back(id);
            start = comma + 1;
        }
        std::sort(ids.begin(), ids.end());
        return ids;
    }
    if (!has(spec)) {
        if (spec.rfind("gpu", 0) == 0 && gpus.empty()) throw fail("no usable GPU");
        throw fail("unknown device");
    }
    return {spec};
}

ScanCapability ScannerRegistry::capability(std::string_view id, const ScanSetup& setup) const {
    for (const Entry& e : entries_)
        if (e.info.id == id) return e.capability ? e.capability(setup) : ScanCapability{};
    return {false, "no scanner named '" + std::string(id) + "'"};
}

std::unique_ptr<DatabaseScanner> ScannerRegistry::create(std::string_view spec, std::string_view flag) const {
    const std::vector<std::string> ids = resolve(spec, flag);
    std::vector<std::unique_ptr<DatabaseScanner>> parts;
    for (const std::string& id : ids)
        for (const Entry& e : entries_)
            if (e.info.id == id) parts.push_back(e.factory());
    if (parts.size() == 1) return std::move(parts.front());
    return make_split_scanner(std::move(parts));
}

namespace {

// Deals the database out to several scanners and merges their scores.
class SplitScanner : public DatabaseScanner {
public:
    explicit SplitScanner(std::vector<std::unique_ptr<DatabaseScanner>> parts) : parts_(std::move(parts)) {
        if (parts_.empty()) throw Error("split scanner: no devices");
    }

    DeviceInfo info() const override {
        DeviceInfo info = parts_.front()->info();
        std::string ids, names;
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            const DeviceInfo p = parts_[k]->info();
            ids += (k ? "," : "") + (k ? p.id.substr(p.id.find(':') + 1) : p.id);
            names += (k ? " + " : "") + p.name;
        }
        info.id = ids;
        info.name = names;
        info.description = std::to_string(parts_.size()) + " devices, database dealt out among them";
        return info;
    }

    void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) override {
        database_ = &database;
        const std::size_t n = parts_.size();
        pieces_.assign(n, {});
        positions_.assign(n, {});
        for (std::size_t p = 0; p < database.size(); ++p) positions_[p % n].push_back(p);
        for (std::size_t k = 0; k < n; ++k) pieces_[k] = database.subset(positions_[k]);
        run_all(context,
                [&](std::size_t k, JobContext& part_context) { parts_[k]->load(pieces_[k], setup, part_context); });
    }

    void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
              JobContext& context) override {
        if (!database_) throw Error("split scanner: scan before load");
        const auto start = std::chrono::steady_clock::now();
        const std::size_t n = parts_.size();
        const std::size_t q = queries.size();
        if (scores.size() != q * database_->size()) throw Error("split scanner: score buffer of the wrong size");
        std::vector<std::vector<std::int64_t>> part_scores(n);
        // Progress: the sum over parts of the cells each has reported.
        std::mutex progress_mutex;
        std::vector<Progress> latest(n);
        std::uint64_t total_cells = 0;
        for (const EncodedSequence* query : queries) total_cells += query->size() * database_->residue_count();
        run_all(context, [&](std::size_t k, JobContext& part_context) {
            part_context.progress = [&, k](const Progress& p) {
                if (!context.progress) return;
                std::lock_guard lock(progress_mutex);
                latest[k] = p;
                Progress sum;
                sum.cells_total = total_cells;
                sum.items_total = q;
                sum.items_done = q;
                for (const Progress& each : latest) {
                    sum.cells_done += each.cells_done;
                    sum.items_done = std::min(sum.items_done, each.items_done);
                }
                context.progress(sum);
            };
            part_scores[k].resize(q * pieces_[k].size());
            parts_[k]->scan(queries, part_scores[k], part_context);
        });
        stats_ = {};
        for (std::size_t k = 0; k < n; ++k) {
            const ScanStats s = parts_[k]->last_stats();
            stats_.cells += s.cells;
            stats_.kernel_seconds = std::max(stats_.kernel_seconds, s.kernel_seconds);
            stats_.recomputed += s.recomputed;
            if (stats_.kernels.find(s.kernels) == std::string::npos)
                stats_.kernels += (stats_.kernels.empty() ? "" : ",") + s.kernels;
            const std::size_t size = pieces_[k].size();
            for (std::size_t query = 0; query < q; ++query)
                for (std::size_t local = 0; local < size; ++local)
                    scores[query * database_->size() + positions_[k][local]] = part_scores[k][query * size + local];
        }
        stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    ScanStats last_stats() const override { return stats_; }

private:
    // Runs body(k) for every part on its own thread; the first error wins and
    // the others are cancelled through a shared token.
    template <typename Body>
    void run_all(JobContext& context, Body body) {
        CancellationToken stop;
        std::exception_ptr failure;
        std::mutex failure_mutex;
        std::vector<std::thread> threads;
        std::atomic<bool> finished{false};
        // Forward the user's cancellation to the parts.
        std::thread watcher([&] {
            while (!finished.load()) {
                if (context.cancelled()) stop.cancel();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            threads.emplace_back([&, k] {
                JobContext part_context;
                part_context.cancel = &stop;
                part_context.timeline = context.timeline;
                try {
                    body(k, part_context);
                } catch (...) {
                    std::lock_guard lock(failure_mutex);
                    if (!failure) failure = std::current_exception();
                    stop.cancel();
                }
            });
        }
        for (auto& t : threads) t.join();
        finished.store(true);
        watcher.join();
        context.throw_if_cancelled();
        if (failure) std::rethrow_exception(failure);
    }

    std::vector<std::unique_ptr<DatabaseScanner>> parts_;
    const PreparedDatabase* database_ = nullptr;
    std::vector<PreparedDatabase> pieces_;
    std::vector<std::vector<std::size_t>> positions_;
    ScanStats stats_;
};

}  // namespace

std::unique_ptr<DatabaseScanner> make_split_scanner(std::vector<std::unique_ptr<DatabaseScanner>> parts) {
    return std::make_unique<SplitScanner>(std::move(parts));
}

}  // namespace alignscope
