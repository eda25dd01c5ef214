// Which CUPTI activity records belong to which timeline operation, kept free of
// CUPTI and CUDA so that it is tested without a GPU: every operation pushes an
// external correlation id around its launch, CUPTI reports which runtime call
// ran under it, and each kernel or copy record of that call becomes a timeline
// event named by the operation (a KernelName) with its device function as detail.
// Header-only, so that the host suites compile it without the CUDA library.
#pragma once

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/device/timeline.hpp>

#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace alignscope::kernels {

// One operation a job puts on the timeline.
struct GpuOp {
    std::string name;      // kernel name ("sw_affine_inter_s16", KernelName's format) or copy ("H2D", "D2H")
    std::string category;  // "kernel" or "copy"
    int lane = 0;          // stream index in the job's pool
    std::uint64_t bytes = 0;
    std::uint64_t cells = 0;
    std::string detail = {};  // what the name does not say, e.g. "reverse pass"
};

// A kernel launch as a timeline operation: named by its KernelName, with what
// the name does not say (the pass) in `detail`.
inline GpuOp kernel_op(const KernelName& kernel, int lane, std::uint64_t cells, std::string detail = {}) {
    return GpuOp{kernel.format(), "kernel", lane, 0, cells, std::move(detail)};
}

// A kernel, copy or memset record of CUPTI's, in CUPTI-free terms.
struct ActivityRecord {
    std::uint32_t correlation = 0;  // CUPTI's id of the runtime call that enqueued the work
    std::uint64_t start = 0;        // ns on CUPTI's clock
    std::uint64_t end = 0;
    std::uint64_t bytes = 0;    // copies and memsets
    std::string function = {};  // a kernel's device function as CUPTI names it (mangled); empty otherwise
};

// The records CUPTI has delivered and the external ids their runtime calls ran
// under, in whichever order they arrive (an external correlation record comes
// before its runtime call's record; the kernel's may come in a later buffer).
class ActivityCorrelation {
public:
    void add_record(ActivityRecord record);
    // A CUPTI external correlation record: runtime call `correlation` ran
    // under our `external` id.
    void add_external(std::uint32_t correlation, std::uint64_t external);

    // Takes out the records whose runtime calls ran under one of `externals`,
    // by external id, in the order CUPTI delivered them. Records of other ids
    // stay for their own timeline (several GPUs' timelines share one CUPTI).
    std::unordered_map<std::uint64_t, std::vector<ActivityRecord>> take(const std::vector<std::uint64_t>& externals);

    // Records and links still held (no timeline took them yet).
    std::size_t held_records() const;
    std::size_t held_links() const { return external_.size(); }
    void clear();

private:
    std::unordered_map<std::uint32_t, std::vector<ActivityRecord>> records_;  // by correlation id
    std::unordered_map<std::uint32_t, std::uint64_t> external_;               // correlation -> external id
};

// A device function's name as a reader wants it: demangled, without its
// return type and namespaces ("intra_s16_chunked<8>(PassParams)"). A name
// that is not mangled is taken as demangled already: only shortened.
std::string readable_function(std::string_view mangled);

// The timeline event of `op` that `record` timed: the operation's name,
// category, lane and cells; the record's times (CUPTI clock + `offset_ns`, the
// steady clock minus CUPTI's) and, for a copy, its bytes; the detail joins the
// operation's detail and the device function ("reverse pass; inter_s16<sw>(PassParams)").
TimelineEvent labelled_event(const GpuOp& op, const ActivityRecord& record, const std::string& device,
                             std::int64_t offset_ns);

inline void ActivityCorrelation::add_record(ActivityRecord record) {
    records_[record.correlation].push_back(std::move(record));
}

inline void ActivityCorrelation::add_external(std::uint32_t correlation, std::uint64_t external) {
    external_[correlation] = external;
}

inline std::unordered_map<std::uint64_t, std::vector<ActivityRecord>> ActivityCorrelation::take(
    const std::vector<std::uint64_t>& externals) {
    const std::unordered_set<std::uint64_t> wanted(externals.begin(), externals.end());
    std::unordered_map<std::uint64_t, std::vector<ActivityRecord>> out;
    for (auto link = external_.begin(); link != external_.end();) {
        const auto [correlation, external] = *link;
        if (!wanted.count(external)) {
            ++link;
            continue;
        }
        if (auto r = records_.find(correlation); r != records_.end()) {
            for (ActivityRecord& record : r->second) out[external].push_back(std::move(record));
            records_.erase(r);
        }
        link = external_.erase(link);
    }
    // Several runtime calls under one id (a launch that sets an attribute
    // first, say) come out in CUPTI's order, which is the order of start times.
    for (auto& [external, records] : out)
        std::stable_sort(records.begin(), records.end(),
                         [](const ActivityRecord& a, const ActivityRecord& b) { return a.start < b.start; });
    return out;
}

inline std::size_t ActivityCorrelation::held_records() const {
    std::size_t n = 0;
    for (const auto& [correlation, records] : records_) n += records.size();
    return n;
}

inline void ActivityCorrelation::clear() {
    records_.clear();
    external_.clear();
}

namespace function_names {

inline bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Drops every qualifier ("alignscope::kernels::device::", "(anonymous
// namespace)::") from a demangled name.
inline std::string without_qualifiers(std::string_view name) {
    constexpr std::string_view anonymous = "(anonymous namespace)";
    std::string out;
    out.reserve(name.size());
    for (std::size_t k = 0; k < name.size(); ++k) {
        if (name.substr(k, 2) != "::") {
            out += name[k];
            continue;
        }
        if (out.size() >= anonymous.size() && std::string_view(out).substr(out.size() - anonymous.size()) == anonymous)
            out.resize(out.size() - anonymous.size());
        else
            while (!out.empty() && is_name_char(out.back())) out.pop_back();
        ++k;
    }
    return out;
}

}  // namespace function_names

inline std::string readable_function(std::string_view mangled) {
    const std::string text(mangled);
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status),
                                                           std::free);
    std::string_view name = status == 0 && demangled ? std::string_view(demangled.get()) : std::string_view(text);
    // A function template's demangled name starts with its return type.
    if (name.substr(0, 5) == "void ") name.remove_prefix(5);
    return function_names::without_qualifiers(name);
}

inline TimelineEvent labelled_event(const GpuOp& op, const ActivityRecord& record, const std::string& device,
                                    std::int64_t offset_ns) {
    TimelineEvent event;
    event.name = op.name;
    event.category = op.category;
    event.device = device;
    event.lane = op.lane;
    event.start_ns = static_cast<std::int64_t>(record.start) + offset_ns;
    event.end_ns = static_cast<std::int64_t>(record.end) + offset_ns;
    event.bytes = op.category == "copy" ? record.bytes : op.bytes;
    event.cells = op.cells;
    event.detail = op.detail;
    if (!record.function.empty()) {
        if (!event.detail.empty()) event.detail += "; ";
        event.detail += readable_function(record.function);
    }
    return event;
}

}  // namespace alignscope::kernels
