// Names of the alignment modes and of the semi-global free end gaps, as the CLI,
// the project store and the GUI spell them.
#include <alignscope/align/alignment.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <cctype>
#include <string>

namespace alignscope {

namespace {

std::string lower_trimmed(std::string_view text) {
    auto begin = text.begin();
    auto end = text.end();
    while (begin != end && std::isspace(static_cast<unsigned char>(*begin))) ++begin;
    while (end != begin && std::isspace(static_cast<unsigned char>(*(end - 1)))) --end;
    std::string out(begin, end);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::string_view to_string(AlignmentMode mode) {
    switch (mode) {
        case AlignmentMode::Global: return "global";
        case AlignmentMode::Local: return "local";
        case AlignmentMode::SemiGlobal: return "semiglobal";
    }
    return "unknown";
}

AlignmentMode parse_mode(std::string_view name) {
    const std::string key = lower_trimmed(name);
    // The algorithm names are accepted too: people say "sw" as often as "local".
    if (key == "global" || key == "nw" || key == "needleman-wunsch") return AlignmentMode::Global;
    if (key == "local" || key == "sw" || key == "smith-waterman") return AlignmentMode::Local;
    if (key == "semiglobal" || key == "semi-global" || key == "sg" || key == "glocal") return AlignmentMode::SemiGlobal;
    throw Error::about("mode",
                       "unknown alignment mode '" + std::string(name) + "' (expected global, local or semiglobal)");
}

FreeEndGaps FreeEndGaps::parse(std::string_view spec) {
    const std::string whole = lower_trimmed(spec);
    if (whole == "all") return all();
    if (whole == "none") return none();
    if (whole.empty())
        throw Error::about("free_ends", "empty list (expected a comma list of qb, qe, tb, te, or all, or none)");

    FreeEndGaps ends = none();
    std::string_view rest = whole;
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string item = lower_trimmed(rest.substr(0, comma));
        if (item == "qb") ends.query_begin = true;
        else if (item == "qe")
            ends.query_end = true;
        else if (item == "tb")
            ends.target_begin = true;
        else if (item == "te")
            ends.target_end = true;
        else if (item.empty())
            throw Error::about("free_ends", "empty item in '" + std::string(spec) + "' (expected qb, qe, tb or te)");
        else
            throw Error::about("free_ends", "unknown end '" + item + "' in '" + std::string(spec) +
                                                "' (expected qb, qe, tb, te, all or none)");
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return ends;
}

std::string FreeEndGaps::to_string() const {
    if (*this == all()) return "all";
    if (*this == none()) return "none";
    std::string out;
    auto add = [&out](bool on, const char* name) {
        if (!on) return;
        if (!out.empty()) out += ',';
        out += name;
    };
    add(query_begin, "qb");
    add(query_end, "qe");
    add(target_begin, "tb");
    add(target_end, "te");
    return out;
}

std::string describe_mode(const AlignOptions& options) {
    std::string label(to_string(options.mode));
    if (options.mode == AlignmentMode::SemiGlobal) label += "[" + options.free_ends.to_string() + "]";
    return label;
}

Alignment Alignment::without_path() const {
    Alignment h;
    h.query_id = query_id;
    h.target_id = target_id;
    h.mode = mode;
    h.score = score;
    h.query_begin = query_begin;
    h.query_end = query_end;
    h.target_begin = target_begin;
    h.target_end = target_end;
    h.query_length = query_length;
    h.target_length = target_length;
    h.stats = stats;
    h.device = device;
    h.kernel = kernel;
    return h;
}

}  // namespace alignscope
