// The device registry: which backends exist, which device kinds are known but
// unusable (and why), and the --device grammar that picks one of them.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include "cpu_backends.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

namespace alignscope {

PairJob PairJob::with_pairs(std::vector<std::pair<std::uint32_t, std::uint32_t>> other) const {
    PairJob sub;
    sub.queries = queries;
    sub.targets = targets;
    sub.pairs = std::move(other);
    sub.scheme = scheme;
    sub.options = options;
    sub.threads = threads;
    sub.streams = streams;
    sub.kernel = kernel;
    sub.gpu_memory_budget = gpu_memory_budget;
    return sub;
}

std::uint64_t PairJob::total_cells() const {
    if (pairs.empty()) return 0;
    if (!queries || !targets) throw Error("pair job has pairs but no query or target sequences");
    std::uint64_t cells = 0;
    for (const auto& [q, t] : pairs) {
        if (q >= queries->size() || t >= targets->size())
            throw Error("pair job refers to query " + std::to_string(q) + " / target " + std::to_string(t) +
                        " but has " + std::to_string(queries->size()) + " queries and " +
                        std::to_string(targets->size()) + " targets");
        cells += static_cast<std::uint64_t>((*queries)[q].residues.size()) * (*targets)[t].residues.size();
    }
    return cells;
}

std::unique_ptr<longpair::PassRunner> Backend::make_long_runner(const LongRunnerSettings&) { return nullptr; }

void Backend::align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) {
    results = align_pairs(job, context);
}

void DeviceRegistry::add(std::unique_ptr<Backend> backend) {
    if (!backend) throw Error("device registry: cannot add a null backend");
    const std::string id = backend->info().id;
    for (const auto& b : backends_)
        if (b->info().id == id) throw Error("device registry: a device named '" + id + "' is already registered");
    backends_.push_back(std::move(backend));
}

void DeviceRegistry::add_unavailable(DeviceInfo info) {
    info.available = false;
    unavailable_.push_back(std::move(info));
}

void DeviceRegistry::set_gpu_group_factory(GroupFactory factory) { group_factory_ = std::move(factory); }

void DeviceRegistry::defer(std::function<void(DeviceRegistry&)> registration) {
    settle();  // one at a time
    deferred_ = std::async(std::launch::async, [registration = std::move(registration)] {
        auto registry = std::make_unique<DeviceRegistry>();
        registration(*registry);
        return registry;
    });
}

void DeviceRegistry::settle() const {
    if (!deferred_.valid()) return;
    const std::unique_ptr<DeviceRegistry> done = deferred_.get();  // rethrows the registration's error
    done->settle();
    for (auto& backend : done->backends_) backends_.push_back(std::move(backend));
    for (auto& info : done->unavailable_) unavailable_.push_back(std::move(info));
    if (done->group_factory_) group_factory_ = std::move(done->group_factory_);
}

std::vector<DeviceInfo> DeviceRegistry::devices() const {
    settle();
    std::vector<DeviceInfo> all;
    for (const auto& b : backends_) all.push_back(b->info());
    for (const auto& u : unavailable_) all.push_back(u);
    return all;
}

namespace {

std::string trimmed_lower(std::string_view text) {
    std::string out;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    return out;
}

bool is_gpu(const DeviceInfo& info) { return info.kind == "gpu"; }

}  // namespace

Backend& DeviceRegistry::select(std::string_view spec_text, std::string_view flag) {
    const std::string spec = trimmed_lower(spec_text);
    // The CPU devices are there from the start: a CPU job does not wait for
    // a GPU driver to start.
    if (spec.rfind("cpu", 0) != 0) settle();

    // What the user can choose from, for every error message.
    auto listing = [this]() {
        std::string text = "available devices: ";
        bool first = true;
        for (const auto& b : backends_) {
            text += (first ? "" : ", ") + b->info().id;
            first = false;
        }
        if (first) text += "none";
        if (!unavailable_.empty()) {
            text += "; unavailable: ";
            for (std::size_t k = 0; k < unavailable_.size(); ++k) {
                const DeviceInfo& u = unavailable_[k];
                text += (k ? ", " : "") + u.id + " (" +
                        (u.unavailable_reason.empty() ? std::string("no reason given") : u.unavailable_reason) + ")";
            }
        }
        return text;
    };
    auto fail = [&](const std::string& why) -> Error {
        return Error(std::string(flag) + " '" + std::string(spec_text) + "': " + why + "; " + listing());
    };
    auto find = [this](const std::string& id) -> Backend* {
        for (const auto& b : backends_)
            if (b->info().id == id) return b.get();
        return nullptr;
    };
    auto gpus = [this]() {
        std::vector<Backend*> list;
        for (const auto& b : backends_)
            if (is_gpu(b->info())) list.push_back(b.get());
        return list;
    };
    auto unavailable_reason = [this](const std::string& id) -> const DeviceInfo* {
        for (const auto& u : unavailable_)
            if (u.id == id || (id.rfind("gpu", 0) == 0 && u.id == "gpu")) return &u;
        return nullptr;
    };
    auto grouped = [&](std::vector<Backend*> members) -> Backend& {
        if (members.size() == 1) return *members.front();
        // "gpu:2,0" and "gpu:0,2" are one group; order by index.
        std::sort(members.begin(), members.end(), [](Backend* a, Backend* b) {
            const std::string x = a->info().id, y = b->info().id;
            return x.size() != y.size() ? x.size() < y.size() : x < y;
        });
        std::string group_id = "gpu:";
        for (std::size_t k = 0; k < members.size(); ++k) {
            if (k) group_id += ',';
            group_id.append(members[k]->info().id, 4);
        }
        for (const auto& [key, group] : groups_)
            if (key == group_id) return *group;
        if (!group_factory_) throw fail("running on several GPUs at once is not supported by this build");
        auto group = group_factory_(std::move(members));
        if (!group) throw fail("could not group the GPUs");
        groups_.emplace_back(group_id, std::move(group));
        return *groups_.back().second;
    };

    if (spec.empty()) throw fail("no device named");

    if (spec == "auto") {
        if (auto list = gpus(); !list.empty()) return grouped(std::move(list));
        if (Backend* cpu = find("cpu")) return *cpu;
        if (Backend* ref = find("cpu-ref")) return *ref;
        throw fail("no device is available");
    }

    if (spec == "gpu") {
        auto list = gpus();
        if (list.empty()) {
            const DeviceInfo* u = unavailable_reason("gpu");
            throw fail(u ? "no GPU can be used: " + u->unavailable_reason : "no GPU is available");
        }
        return grouped(std::move(list));
    }

    if (spec.rfind("gpu:", 0) == 0) {
        // "gpu:N" or a comma list "gpu:0,2" (or "gpu:0,gpu:2"): each an index of a registered GPU.
        std::vector<Backend*> members;
        std::string_view rest = std::string_view(spec).substr(4);
        if (rest.empty()) throw fail("expected a GPU index after 'gpu:'");
        while (true) {
            const std::size_t comma = rest.find(',');
            std::string_view item = rest.substr(0, comma);
            if (item.rfind("gpu:", 0) == 0) item.remove_prefix(4);
            int index = -1;
            auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
            if (item.empty() || ec != std::errc() || end != item.data() + item.size() || index < 0)
                throw fail("'" + std::string(item) + "' is not a GPU index");
            const std::string id = "gpu:" + std::to_string(index);
            Backend* b = find(id);
            if (!b) {
                const DeviceInfo* u = unavailable_reason(id);
                throw fail(u ? id + " cannot be used: " + u->unavailable_reason : "there is no " + id);
            }
            if (std::find(members.begin(), members.end(), b) == members.end()) members.push_back(b);
            if (comma == std::string_view::npos) break;
            rest = rest.substr(comma + 1);
        }
        return grouped(std::move(members));
    }

    if (Backend* b = find(spec)) return *b;
    if (const DeviceInfo* u = unavailable_reason(spec); u && u->id == spec)
        throw fail(spec + " cannot be used: " + u->unavailable_reason);
    throw fail("unknown device (expected cpu-ref, cpu, gpu, gpu:N, gpu:N,M or auto)");
}

std::unique_ptr<DeviceRegistry> make_cpu_registry() {
    auto registry = std::make_unique<DeviceRegistry>();
    registry->add(make_cpu_reference_backend());
    registry->add(make_parasail_backend());
    return registry;
}

}  // namespace alignscope
