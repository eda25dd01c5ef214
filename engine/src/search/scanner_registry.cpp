// The scanner registry (the --device grammar, as DeviceRegistry::select reads
// it); several devices make one split scanner (split_scanner.cpp).
#include <alignscope/error.hpp>
#include <alignscope/search/scan.hpp>

#include <algorithm>
#include <cctype>

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

}  // namespace alignscope
