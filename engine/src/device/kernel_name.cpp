// KernelName's one format and one parse, and the reading of names that earlier
// versions stored.
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>
#include <vector>

namespace alignscope {

namespace {

constexpr std::array<std::pair<KernelWidth, std::string_view>, 5> width_words{{
    {KernelWidth::S8, "s8"},
    {KernelWidth::S16, "s16"},
    {KernelWidth::S32, "s32"},
    {KernelWidth::S64, "s64"},
    {KernelWidth::S16x2, "s16x2"},
}};

// Family words earlier versions wrote, and today's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> renamed_families{{
    {"dbscan", "search"},
}};

constexpr std::string_view example = "mode_gaps_family_width, e.g. sw_affine_inter_s16 or nw_linear_intra8_s32";

[[noreturn]] void refuse(std::string_view text, const std::string& why) {
    throw Error("kernel name '" + std::string(text) + "': " + why + " (a kernel name is " + std::string(example) + ")");
}

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t from = 0;
    for (;;) {
        const std::size_t at = text.find('_', from);
        words.push_back(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
        if (at == std::string_view::npos) return words;
        from = at + 1;
    }
}

std::optional<int> number(std::string_view digits) {
    int value = 0;
    if (digits.empty() || digits.size() > 6) return std::nullopt;
    for (char c : digits)
        if (!is_digit(c)) return std::nullopt;
    std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return value;
}

// Parses, answering the reason instead of throwing; `out` is set when empty.
std::string parse_into(std::string_view text, KernelName& out) {
    const std::vector<std::string_view> words = split_words(text);
    if (words.size() != 4)
        return "it has " + std::to_string(words.size()) + (words.size() == 1 ? " word" : " words") +
               " between underscores, not 4";
    const std::optional<AlignmentMode> mode = mode_from_word(words[0]);
    if (!mode) return "unknown mode '" + std::string(words[0]) + "' (expected sw, nw or sg)";
    if (words[1] != "linear" && words[1] != "affine")
        return "unknown gap model '" + std::string(words[1]) + "' (expected linear or affine)";
    const std::string_view family_word = words[2];
    std::size_t letters = 0;
    while (letters < family_word.size() && is_lower(family_word[letters])) ++letters;
    if (letters == 0) return "the family '" + std::string(family_word) + "' does not start with a lower-case letter";
    int group = 0;
    if (letters < family_word.size()) {
        const std::optional<int> n = number(family_word.substr(letters));
        if (!n || *n == 0 || family_word[letters] == '0')
            return "the family '" + std::string(family_word) +
                   "' is not letters followed by an optional group size (e.g. intra8)";
        group = *n;
    }
    const auto width =
        std::find_if(width_words.begin(), width_words.end(), [&](const auto& w) { return w.second == words[3]; });
    if (width == width_words.end())
        return "unknown lane width '" + std::string(words[3]) + "' (expected s8, s16, s32, s64 or s16x2)";
    out.mode = *mode;
    out.linear = words[1] == "linear";
    out.family = std::string(family_word.substr(0, letters));
    out.group = group;
    out.width = width->first;
    return {};
}

}  // namespace

std::string_view to_string(KernelWidth width) {
    for (const auto& [w, word] : width_words)
        if (w == width) return word;
    return "s32";
}

int bits_of(KernelWidth width) {
    switch (width) {
        case KernelWidth::S8: return 8;
        case KernelWidth::S16:
        case KernelWidth::S16x2: return 16;
        case KernelWidth::S32: return 32;
        case KernelWidth::S64: return 64;
    }
    return 32;
}

std::string_view mode_word(AlignmentMode mode) {
    switch (mode) {
        case AlignmentMode::Local: return "sw";
        case AlignmentMode::Global: return "nw";
        case AlignmentMode::SemiGlobal: return "sg";
    }
    return "sw";
}

std::optional<AlignmentMode> mode_from_word(std::string_view word) {
    if (word == "sw") return AlignmentMode::Local;
    if (word == "nw") return AlignmentMode::Global;
    if (word == "sg") return AlignmentMode::SemiGlobal;
    return std::nullopt;
}

std::string KernelName::format() const {
    std::string out(mode_word(mode));
    out += linear ? "_linear_" : "_affine_";
    out += family;
    if (group > 0) out += std::to_string(group);
    out += '_';
    out += to_string(width);
    return out;
}

KernelName KernelName::parse(std::string_view text) {
    if (text.empty()) refuse(text, "it is empty");
    KernelName name;
    if (std::string why = parse_into(text, name); !why.empty()) refuse(text, why);
    return name;
}

std::optional<KernelName> KernelName::try_parse(std::string_view text) {
    KernelName name;
    if (text.empty() || !parse_into(text, name).empty()) return std::nullopt;
    return name;
}

std::optional<KernelName> read_renamed_kernel_name(std::string_view text) {
    std::optional<KernelName> name = KernelName::try_parse(text);
    if (!name) return std::nullopt;
    const auto renamed = std::find_if(renamed_families.begin(), renamed_families.end(),
                                      [&](const auto& r) { return r.first == name->family; });
    if (renamed == renamed_families.end()) return std::nullopt;
    name->family = std::string(renamed->second);
    return name;
}

std::optional<KernelName> read_stored_kernel_name(std::string_view text) {
    if (std::optional<KernelName> renamed = read_renamed_kernel_name(text)) return renamed;
    if (std::optional<KernelName> today = KernelName::try_parse(text)) return today;
    // A column split over several devices named "split<N>_<member kernel>".
    if (text.substr(0, 5) == "split") {
        const std::size_t underscore = text.find('_');
        if (underscore != std::string_view::npos && number(text.substr(5, underscore - 5)))
            return read_stored_kernel_name(text.substr(underscore + 1));
    }
    // The scalar pass runner: "long_scalar_columns" (32-bit rows).
    if (text == "long_scalar_columns") return KernelName{AlignmentMode::Global, false, "columns", 0, KernelWidth::S32};
    // The strip kernel: "long_strips", "long_strips_r<R>[_local][_k<K>s<S>]".
    if (text.substr(0, 11) != "long_strips") return std::nullopt;
    KernelName name{AlignmentMode::Global, false, "strips", 0, KernelWidth::S32};
    std::string_view rest = text.substr(11);
    if (rest.empty()) return name;
    if (rest.substr(0, 2) != "_r") return std::nullopt;
    rest.remove_prefix(2);
    std::size_t digits = 0;
    while (digits < rest.size() && is_digit(rest[digits])) ++digits;
    const std::optional<int> rows = number(rest.substr(0, digits));
    if (!rows) return std::nullopt;
    name.group = *rows;
    rest.remove_prefix(digits);
    if (rest.substr(0, 6) == "_local") {
        name.mode = AlignmentMode::Local;
        rest.remove_prefix(6);
    }
    if (rest.empty()) return name;
    // "_k<K>s<S>": the streams strategy's kernel and stream counts.
    if (rest.substr(0, 2) != "_k") return std::nullopt;
    const std::size_t s = rest.find('s');
    if (s == std::string_view::npos || !number(rest.substr(2, s - 2)) || !number(rest.substr(s + 1)))
        return std::nullopt;
    return name;
}

std::string read_stored_kernel_names(std::string_view text) {
    std::string out;
    std::size_t from = 0;
    for (;;) {
        const std::size_t comma = text.find(',', from);
        const std::string_view item = text.substr(from, comma == std::string_view::npos ? comma : comma - from);
        const std::size_t word = std::min(item.find_first_not_of(' '), item.size());
        out += item.substr(0, word);
        const std::optional<KernelName> name = read_stored_kernel_name(item.substr(word));
        out += name ? name->format() : std::string(item.substr(word));
        if (comma == std::string_view::npos) return out;
        out += ',';
        from = comma + 1;
    }
}

}  // namespace alignscope
