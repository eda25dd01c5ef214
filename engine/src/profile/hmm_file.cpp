// Reader of HMMER3 text save files. The layout: a format tag line, header lines
// (TAG value...) up to the "HMM" line, a line naming the transitions, an
// optional COMPO line, node 0's insert and transition lines, then for each node
// k its match line (k, K values, MAP/CONS/RF/MM/CS annotation by version), insert
// line and transition line, and "//". Values are negative natural logs, '*' for
// probability zero.
#include <alignscope/error.hpp>
#include <alignscope/profile/hmm_file.hpp>

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>

namespace alignscope::profile {

namespace {

std::vector<std::string_view> tokens_of(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        if (i >= line.size()) break;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
        out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

// Format versions in order, so that "at least 3/e" is a comparison.
int version_of(std::string_view tag) {
    static const char* tags[] = {"HMMER3/b", "HMMER3/c", "HMMER3/d", "HMMER3/e", "HMMER3/f"};
    for (int i = 0; i < 5; ++i)
        if (tag == tags[i]) return i;
    return -1;
}
constexpr int kV3c = 1, kV3e = 3, kV3f = 4;

class Parser {
public:
    Parser(const std::string& text, const std::string& path) : path_(path) {
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            lines_.emplace_back(text.data() + start, end - start);
            start = end + 1;
        }
    }

    std::vector<ProfileHmm> parse() {
        std::vector<ProfileHmm> models;
        while (next_line()) models.push_back(parse_model());
        if (models.empty()) fail_at(0, "no profile HMM in the file (expected a HMMER3/f header line)");
        return models;
    }

private:
    [[noreturn]] void fail_at(std::size_t line, const std::string& what) const {
        throw Error(path_ + ":" + std::to_string(line) + ": " + what);
    }
    [[noreturn]] void fail(const std::string& what) const { fail_at(current_ + 1, what); }

    // Advances to the next line with tokens; false at the end.
    bool next_line() {
        while (next_ < lines_.size()) {
            current_ = next_++;
            tokens_ = tokens_of(lines_[current_]);
            if (!tokens_.empty()) return true;
        }
        current_ = lines_.size();
        tokens_.clear();
        return false;
    }
    void require_line(const std::string& expected) {
        if (!next_line()) fail_at(lines_.size(), "the file ends early: expected " + expected);
    }

    double number(std::string_view token, const std::string& field) const {
        std::string s(token);
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !std::isfinite(v))
            fail("expected a number for " + field + ", found '" + s + "'");
        return v;
    }
    int integer(std::string_view token, const std::string& field) const {
        std::string s(token);
        char* end = nullptr;
        const long v = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || v < -2147483647 || v > 2147483647)
            fail("expected a whole number for " + field + ", found '" + s + "'");
        return static_cast<int>(v);
    }
    // A negative natural log probability, or '*' for zero, as a probability.
    float probability(std::string_view token, const std::string& field) const {
        if (token == "*") return 0.0f;
        const double v = number(token, field);
        if (v < 0)
            fail("expected a negative log probability (>= 0) for " + field + ", found '" + std::string(token) + "'");
        return std::exp(static_cast<float>(-1.0 * v));
    }
    std::string rest_after_tag() const {
        std::string_view line = lines_[current_];
        std::size_t i = line.find(tokens_[0]) + tokens_[0].size();
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        std::size_t end = line.size();
        while (end > i && (line[end - 1] == '\r' || line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
        return std::string(line.substr(i, end - i));
    }
    void need_tokens(std::size_t n, const std::string& what) const {
        if (tokens_.size() < n) fail(what);
    }
    bool yes_no(const std::string& tag) const {
        need_tokens(2, tag + " line needs yes or no");
        std::string v(tokens_[1]);
        for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (v == "yes") return true;
        if (v == "no") return false;
        fail(tag + " line must say yes or no, not '" + std::string(tokens_[1]) + "'");
    }

    // What the header lines before HMM said, beyond the fields of ProfileHmm.
    struct Header {
        int version = 0;
        bool have_alphabet = false, has_cons = false, has_rf = false, has_mm = false, has_cs = false, has_map = false;
        int stats_seen = 0;  // bits: MSV 1, VITERBI 2, FORWARD 4
        ProfileStatistics stats;
    };

    ProfileHmm parse_model() {
        ProfileHmm hmm;
        hmm.path = path_;
        hmm.line = static_cast<int>(current_ + 1);
        Header header;
        header.version = read_format_tag(hmm);
        for (;;) {
            require_line("the HMM line that starts the model's nodes");
            if (tokens_[0] == "HMM") break;
            read_header_line(hmm, header);
        }
        check_header(hmm, header);
        allocate_nodes(hmm, header);
        read_node_zero(hmm);
        for (int k = 1; k <= hmm.length; ++k) read_node(hmm, header, k);
        require_line("the closing // of model '" + hmm.name + "'");
        if (tokens_[0] != "//")
            fail("expected the closing // of model '" + hmm.name + "', found '" + std::string(tokens_[0]) + "'");
        if (header.version < kV3e || !header.has_cons) set_consensus(hmm);
        return hmm;
    }

    // The HMMER3/b..f tag that opens a model; returns its version.
    int read_format_tag(ProfileHmm& hmm) const {
        const std::string tag(tokens_[0]);
        if (tag.rfind("HMMER2", 0) == 0)
            fail("HMMER2 save files are not supported; convert it with `hmmconvert` to HMMER3/f first");
        const int version = version_of(tag);
        if (version < 0) {
            if (tag == "HMMER3/a")
                fail("the HMMER3/a save format (a 3.0 alpha) is not supported; give a HMMER3/b-3/f file");
            fail("expected a HMMER3 format tag (HMMER3/f) to start a profile HMM, found '" + tag + "'");
        }
        hmm.format = tag;
        return version;
    }

    // One header line (NAME, LENG, ALPH, STATS, ...). Other tags (DATE, COM,
    // BM, SM, ...) carry nothing the search needs.
    void read_header_line(ProfileHmm& hmm, Header& header) const {
        const std::string key(tokens_[0]);
        if (key == "NAME") {
            need_tokens(2, "NAME line without a name");
            hmm.name = std::string(tokens_[1]);
        } else if (key == "ACC") {
            need_tokens(2, "ACC line without an accession");
            hmm.accession = std::string(tokens_[1]);
        } else if (key == "DESC") {
            hmm.description = rest_after_tag();
        } else if (key == "LENG") {
            need_tokens(2, "LENG line without a length");
            hmm.length = integer(tokens_[1], "the model length (LENG)");
            if (hmm.length <= 0 || hmm.length > 100000)
                fail("model length (LENG) must be between 1 and 100000, not " + std::string(tokens_[1]));
        } else if (key == "MAXL" && header.version >= kV3c) {
            need_tokens(2, "MAXL line without a length");
            hmm.max_length = integer(tokens_[1], "the maximum length (MAXL)");
        } else if (key == "ALPH") {
            read_alphabet(hmm);
            header.have_alphabet = true;
        } else if (key == "RF") {
            header.has_rf = yes_no(key);
        } else if (key == "MM") {
            header.has_mm = yes_no(key);
        } else if (key == "CONS") {
            header.has_cons = yes_no(key);
        } else if (key == "CS") {
            header.has_cs = yes_no(key);
        } else if (key == "MAP") {
            header.has_map = yes_no(key);
        } else if (key == "NSEQ") {
            need_tokens(2, "NSEQ line without a number");
            hmm.sequences = integer(tokens_[1], "the number of sequences (NSEQ)");
        } else if (key == "EFFN") {
            need_tokens(2, "EFFN line without a number");
            hmm.effective_sequences = number(tokens_[1], "the effective number of sequences (EFFN)");
        } else if (key == "CKSUM") {
            read_checksum(hmm);
        } else if (key == "GA" || key == "TC" || key == "NC") {
            const bool nucleotide = hmm.alphabet != ResidueAlphabet::Amino && header.have_alphabet;
            need_tokens(nucleotide ? 2 : 3, key + " line needs two cutoffs (sequence and domain)");
            const double a = number(tokens_[1], key + " cutoff");
            const double b = nucleotide ? a : number(tokens_[2], key + " cutoff");
            (key == "GA" ? hmm.gathering : key == "TC" ? hmm.trusted : hmm.noise) = std::make_pair(a, b);
        } else if (key == "STATS") {
            read_statistics(header);
        }
    }

    void read_alphabet(ProfileHmm& hmm) const {
        need_tokens(2, "ALPH line without an alphabet");
        std::string a(tokens_[1]);
        for (auto& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (a == "amino") hmm.alphabet = ResidueAlphabet::Amino;
        else if (a == "dna")
            hmm.alphabet = ResidueAlphabet::Dna;
        else if (a == "rna")
            hmm.alphabet = ResidueAlphabet::Rna;
        else
            fail("alphabet (ALPH) must be amino, DNA or RNA, not '" + std::string(tokens_[1]) + "'");
    }

    void read_checksum(ProfileHmm& hmm) const {
        need_tokens(2, "CKSUM line without a number");
        const double v = number(tokens_[1], "the checksum (CKSUM)");
        if (v < 0 || v > 4294967295.0 || v != std::floor(v))
            fail("the checksum (CKSUM) is a whole number from 0 to 4294967295, not '" + std::string(tokens_[1]) + "'");
        hmm.checksum = static_cast<std::uint32_t>(v);
    }

    // STATS LOCAL MSV|VITERBI|FORWARD mu-or-tau lambda.
    void read_statistics(Header& header) const {
        need_tokens(5, "STATS line needs five fields: STATS LOCAL MSV|VITERBI|FORWARD value value");
        std::string where(tokens_[1]), which(tokens_[2]);
        for (auto& c : where) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        for (auto& c : which) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (where != "LOCAL") fail("STATS line: expected LOCAL, found '" + std::string(tokens_[1]) + "'");
        // Kept at single precision, as HMMER holds them, so P-values match its own.
        const double a = static_cast<float>(number(tokens_[3], "STATS " + which));
        const double b = static_cast<float>(number(tokens_[4], "STATS " + which));
        if (b <= 0) fail("STATS " + which + ": lambda must be positive, not " + std::string(tokens_[4]));
        ProfileStatistics& stats = header.stats;
        if (which == "MSV") stats.msv_mu = a, stats.msv_lambda = b, header.stats_seen |= 1;
        else if (which == "VITERBI")
            stats.viterbi_mu = a, stats.viterbi_lambda = b, header.stats_seen |= 2;
        else if (which == "FORWARD")
            stats.forward_tau = a, stats.forward_lambda = b, header.stats_seen |= 4;
        else
            fail("STATS LOCAL line: expected MSV, VITERBI or FORWARD, found '" + std::string(tokens_[2]) + "'");
    }

    // At the HMM line: the fields every model must have.
    void check_header(ProfileHmm& hmm, const Header& header) const {
        const std::size_t hmm_line = current_ + 1;
        if (hmm.name.empty()) fail_at(hmm_line, "the model has no NAME line");
        if (hmm.length <= 0) fail_at(hmm_line, "model '" + hmm.name + "' has no LENG line");
        if (!header.have_alphabet) fail_at(hmm_line, "model '" + hmm.name + "' has no ALPH line");
        if (header.stats_seen == 7) hmm.statistics = header.stats;
        else if (header.stats_seen != 0)
            fail_at(hmm_line, "model '" + hmm.name + "' lacks one of its STATS LOCAL MSV/VITERBI/FORWARD lines");
    }

    static void allocate_nodes(ProfileHmm& hmm, const Header& header) {
        const int K = hmm.canonical();
        const std::size_t nodes = static_cast<std::size_t>(hmm.length + 1);
        hmm.match.assign(nodes * static_cast<std::size_t>(K), 0.0f);
        hmm.insert.assign(nodes * static_cast<std::size_t>(K), 0.0f);
        hmm.transitions.assign(nodes * static_cast<std::size_t>(kTransitions), 0.0f);
        hmm.consensus.assign(nodes, ' ');
        hmm.reference = hmm.model_mask = hmm.structure = std::string();
        if (header.has_rf) hmm.reference.assign(nodes, ' ');
        if (header.has_mm) hmm.model_mask.assign(nodes, ' ');
        if (header.has_cs) hmm.structure.assign(nodes, ' ');
        if (header.has_map) hmm.alignment_map.assign(nodes, 0);
    }

    // `count` probabilities of node k from tokens_[first...] into into[k * stride ...].
    void read_values(std::vector<float>& into, int k, int count, int stride, std::size_t first,
                     const std::string& what) const {
        if (tokens_.size() < first + static_cast<std::size_t>(count))
            fail(what + " of node " + std::to_string(k) + ": expected " + std::to_string(count) + " values, found " +
                 std::to_string(tokens_.size() - first));
        for (int i = 0; i < count; ++i)
            into[static_cast<std::size_t>(k * stride + i)] =
                probability(tokens_[first + static_cast<std::size_t>(i)], what + " of node " + std::to_string(k));
    }

    // A distribution of the line just read sums to 1 (5 decimals of -ln p
    // leave far less than 0.001 of rounding); anything else would make the
    // search's log-odds meaningless (NaN occupancies, a stall in the filters).
    void require_sum(const std::vector<float>& values, std::size_t from, int count, const std::string& what) const {
        double sum = 0;
        for (int i = 0; i < count; ++i) sum += values[from + static_cast<std::size_t>(i)];
        if (std::fabs(sum - 1.0) > 1e-3)
            fail(what + " sum to " + std::to_string(sum) + " as probabilities (exp of minus each value), not 1");
    }
    void require_node_sums(const ProfileHmm& hmm, int k, bool match) const {
        const auto K = static_cast<std::size_t>(hmm.canonical()), node = static_cast<std::size_t>(k);
        const std::string of = " of node " + std::to_string(k);
        if (match) require_sum(hmm.match, node * K, static_cast<int>(K), "the match emissions" + of);
        else
            require_sum(hmm.insert, node * K, static_cast<int>(K), "the insert emissions" + of);
    }
    void require_transition_sums(const ProfileHmm& hmm, int k) const {
        const std::size_t t = static_cast<std::size_t>(k) * kTransitions;
        const std::string of = " of node " + std::to_string(k);
        require_sum(hmm.transitions, t + kMM, 3, "the transitions out of the match state" + of);
        require_sum(hmm.transitions, t + kIM, 2, "the transitions out of the insert state" + of);
        require_sum(hmm.transitions, t + kDM, 2, "the transitions out of the delete state" + of);
    }

    // The transition names, the optional COMPO line, node 0's inserts and transitions.
    void read_node_zero(ProfileHmm& hmm) {
        const int K = hmm.canonical();
        require_line("the transition names after the HMM line");
        require_line("node 0 (COMPO or insert emissions)");
        if (tokens_[0] == "COMPO") {
            if (tokens_.size() != static_cast<std::size_t>(K + 1))
                fail("COMPO line needs " + std::to_string(K) + " values, found " + std::to_string(tokens_.size() - 1));
            hmm.composition.resize(static_cast<std::size_t>(K));
            for (int x = 0; x < K; ++x)
                hmm.composition[static_cast<std::size_t>(x)] =
                    probability(tokens_[static_cast<std::size_t>(x + 1)], "COMPO");
            require_line("node 0's insert emissions");
        }
        read_values(hmm.insert, 0, K, K, 0, "insert emissions");
        require_node_sums(hmm, 0, false);
        require_line("node 0's transitions");
        read_values(hmm.transitions, 0, kTransitions, kTransitions, 0, "transitions");
        require_transition_sums(hmm, 0);
    }

    // Node k's three lines: match emissions and annotation, inserts, transitions.
    void read_node(ProfileHmm& hmm, const Header& header, int k) {
        const int K = hmm.canonical(), M = hmm.length;
        require_line("node " + std::to_string(k) + " of " + std::to_string(M));
        if (tokens_[0] == "//")
            fail("model '" + hmm.name + "' ends after " + std::to_string(k - 1) + " nodes; LENG says " +
                 std::to_string(M));
        if (integer(tokens_[0], "the node number") != k)
            fail("expected the match line of node " + std::to_string(k) + ", found node " + std::string(tokens_[0]));
        read_values(hmm.match, k, K, K, 1, "match emissions");
        require_node_sums(hmm, k, true);
        // Annotation after the emissions: MAP, CONS (3/e on), RF, MM (3/f), CS.
        const int version = header.version;
        std::size_t a = static_cast<std::size_t>(K + 1);
        const std::size_t annotations = 3 + (version >= kV3e ? 1 : 0) + (version >= kV3f ? 1 : 0);
        if (tokens_.size() < a + annotations)
            fail("match line of node " + std::to_string(k) + ": expected " + std::to_string(annotations) +
                 " annotation fields after the emissions (MAP, CONS, RF, MM, CS, '-' where absent)");
        const std::size_t node = static_cast<std::size_t>(k);
        if (header.has_map) hmm.alignment_map[node] = integer(tokens_[a], "the MAP field");
        ++a;
        if (version >= kV3e) hmm.consensus[node] = tokens_[a++][0];
        if (header.has_rf) hmm.reference[node] = tokens_[a][0];
        ++a;
        if (version >= kV3f) {
            if (header.has_mm) hmm.model_mask[node] = tokens_[a][0];
            ++a;
        }
        if (header.has_cs) hmm.structure[node] = tokens_[a][0];
        require_line("the insert emissions of node " + std::to_string(k));
        read_values(hmm.insert, k, K, K, 0, "insert emissions");
        require_node_sums(hmm, k, false);
        require_line("the transitions of node " + std::to_string(k));
        read_values(hmm.transitions, k, kTransitions, kTransitions, 0, "transitions");
        require_transition_sums(hmm, k);
    }

    // Older files carry no consensus: the most probable residue of each match
    // state, upper case where it is probable enough (as HMMER derives it).
    static void set_consensus(ProfileHmm& hmm) {
        const ResidueCode& code = ResidueCode::of(hmm.alphabet);
        const int K = code.canonical();
        const float threshold = hmm.alphabet == ResidueAlphabet::Amino ? 0.5f : 0.9f;
        for (int k = 1; k <= hmm.length; ++k) {
            int best = 0;
            for (int x = 1; x < K; ++x)
                if (hmm.match_probability(k, x) > hmm.match_probability(k, best)) best = x;
            const char c = code.symbol(best);
            hmm.consensus[static_cast<std::size_t>(k)] =
                hmm.match_probability(k, best) >= threshold
                    ? c
                    : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }

    std::string path_;
    std::vector<std::string_view> lines_;
    std::size_t next_ = 0, current_ = 0;
    std::vector<std::string_view> tokens_;
};

}  // namespace

std::vector<ProfileHmm> parse_hmm_text(const std::string& text, const std::string& path) {
    if (!text.empty() && (static_cast<unsigned char>(text[0]) >= 0x80 || text[0] == '\0'))
        throw Error(path + ": a binary (hmmpress) profile file is not supported; give the text .hmm file");
    if (text.find('\0') != std::string::npos)
        throw Error(path + ": a binary file, not a HMMER3 text save file; give the text .hmm file");
    Parser parser(text, path);
    return parser.parse();
}

std::vector<ProfileHmm> read_hmm_file(const std::string& path) {
    gzFile file = path == "-" ? gzdopen(0, "rb") : gzopen(path.c_str(), "rb");
    if (!file) throw Error(path + ": cannot open: " + std::strerror(errno));
    std::string text;
    char buffer[1 << 16];
    try {
        for (;;) {
            const int n = gzread(file, buffer, sizeof buffer);
            if (n < 0) {
                int code = 0;
                std::string message = gzerror(file, &code);
                gzclose(file);
                throw Error(path + ": cannot read: " + message);
            }
            if (n == 0) break;
            text.append(buffer, static_cast<std::size_t>(n));
            // A text save file holds no NUL byte: stop at one (/dev/zero, a
            // binary file), and the parser refuses the file as binary.
            if (std::memchr(buffer, 0, static_cast<std::size_t>(n))) break;
        }
        gzclose(file);
        file = nullptr;
        return parse_hmm_text(text, path);
    } catch (const std::bad_alloc&) {
        if (file) gzclose(file);
        const std::size_t read = text.size();
        text = {};
        throw Error(path + ": out of memory after reading " + std::to_string(read >> 20) +
                    " MiB of the profile file; search with fewer models at a time (split the file), or use a "
                    "machine with more memory");
    }
}

}  // namespace alignscope::profile
