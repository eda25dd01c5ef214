// Project inputs: sequence sets and profiles, identified by path and SHA-256,
// embedded up to the size limit and referenced beyond it.
#include "project_impl.hpp"
#include "sha256.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <sys/stat.h>

namespace alignscope::store {
namespace fs = std::filesystem;
namespace {

struct FileFacts {
    std::string path;  // absolute
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
};

FileFacts file_facts(const std::string& path) {
    FileFacts facts;
    std::error_code ec;
    facts.path = fs::absolute(path, ec).lexically_normal().string();
    if (ec) facts.path = path;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    // Its size, hash and embedded copy are read from the file again: a FIFO or
    // device would block, or give other bytes.
    if (!S_ISREG(info.st_mode)) throw Error(path + ": not a regular file; a project records inputs that are files");
    facts.size = static_cast<std::uint64_t>(info.st_size);
    facts.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
    return facts;
}

// Records from standard input have no file to hash: the digest covers what
// was read, one "id TAB description TAB residues TAB quality" line per record.
std::string records_digest(const std::vector<Sequence>& records) {
    Sha256 digest;
    for (const Sequence& s : records) {
        digest.update(s.id);
        digest.update("\t");
        digest.update(s.description);
        digest.update("\t");
        digest.update(s.residues);
        digest.update("\t");
        digest.update(s.quality);
        digest.update("\n");
    }
    return digest.hex_digest();
}

std::optional<std::int64_t> find_input(sqlite::Connection& db, const std::string& kind, const std::string& path,
                                       const std::string& sha256) {
    auto found = db.prepare("SELECT id FROM inputs WHERE kind = ? AND path = ? AND sha256 = ?");
    found.bind(1, kind).bind(2, path).bind(3, sha256);
    if (found.step()) return found.int64(0);
    return std::nullopt;
}

InputInfo read_input(const sqlite::Statement& row) {
    InputInfo info;
    info.id = row.int64(0);
    info.kind = row.text(1) == "profile" ? InputKind::Profile : InputKind::SequenceSet;
    info.path = row.text(2);
    info.size_bytes = static_cast<std::uint64_t>(row.int64(3));
    info.mtime_ns = row.int64(4);
    info.sha256 = row.text(5);
    info.alphabet = row.text(6);
    info.record_count = static_cast<std::uint64_t>(row.int64(7));
    info.residue_count = static_cast<std::uint64_t>(row.int64(8));
    info.embedded = row.int64(9) != 0;
    info.added_ms = row.int64(10);
    return info;
}

constexpr const char* kInputColumns =
    "id, kind, path, size_bytes, mtime_ns, sha256, alphabet, record_count, residue_count, embedded, added_ms";

}  // namespace

std::string_view to_string(InputKind kind) { return kind == InputKind::Profile ? "profile" : "sequences"; }

std::string_view to_string(InputStatus status) {
    switch (status) {
        case InputStatus::NotChecked: return "not checked";
        case InputStatus::Unchanged: return "unchanged";
        case InputStatus::Changed: return "changed";
        case InputStatus::Missing: return "missing";
    }
    return "not checked";
}

std::int64_t Project::add_sequence_set(const SequenceSet& set) {
    impl_->require_writable("add an input");
    FileFacts facts;
    std::string digest;
    struct stat info {};
    const bool stream =
        set.path == "-" || set.path.empty() || ::stat(set.path.c_str(), &info) != 0 || !S_ISREG(info.st_mode);
    if (stream) {  // standard input, a pipe or process substitution: recorded as what was read
        facts.path = "-";
        digest = records_digest(set.records);
    } else {
        facts = file_facts(set.path);
        digest = sha256_file(set.path);
    }
    std::uint64_t bytes = 0, residues = 0;
    for (const Sequence& s : set.records) {
        bytes += s.id.size() + s.description.size() + s.residues.size() + s.quality.size();
        residues += s.residues.size();
    }
    const bool embed = bytes <= impl_->options.embed_limit_bytes;

    auto& db = *impl_->db;
    std::int64_t id = 0;
    db.write("adding input " + facts.path, [&] {
        if (auto existing = find_input(db, "sequences", facts.path, digest)) {
            id = *existing;
            return;
        }
        auto insert = db.prepare(
            "INSERT INTO inputs (kind, path, size_bytes, mtime_ns, sha256, alphabet, record_count, residue_count, "
            "embedded, content, added_ms) VALUES ('sequences', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)");
        insert.bind(1, facts.path)
            .bind(2, facts.size)
            .bind(3, facts.mtime_ns)
            .bind(4, digest)
            .bind(5, to_string(set.alphabet))
            .bind(6, static_cast<std::uint64_t>(set.records.size()))
            .bind(7, residues)
            .bind(8, embed ? 1 : 0)
            .bind(9, now_ms());
        insert.run();
        id = db.last_insert_rowid();
        if (!embed) return;
        auto record = db.prepare(
            "INSERT INTO input_sequences (input_id, ordinal, name, description, residues, quality) "
            "VALUES (?, ?, ?, ?, ?, ?)");
        std::int64_t ordinal = 0;
        for (const Sequence& s : set.records) {
            record.bind(1, id)
                .bind(2, ordinal++)
                .bind(3, s.id)
                .bind(4, s.description)
                .bind(5, s.residues)
                .bind(6, s.quality);
            record.run();
        }
    });
    return id;
}

std::int64_t Project::add_profile(const std::string& path, AlphabetKind alphabet, std::uint64_t model_count,
                                  std::uint64_t match_states) {
    impl_->require_writable("add an input");
    const FileFacts facts = file_facts(path);
    const std::string digest = sha256_file(path);
    std::string content;
    const bool embed = facts.size <= impl_->options.embed_limit_bytes;
    if (embed) {
        std::ifstream file(path, std::ios::binary);
        std::ostringstream buffer;
        buffer << file.rdbuf();
        if (!file && !file.eof()) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
        content = buffer.str();
        // The file may have changed between hashing and reading: keep what was hashed.
        Sha256 check;
        check.update(content);
        if (check.hex_digest() != digest) throw Error(path + ": the file changed while it was being read");
    }
    auto& db = *impl_->db;
    std::int64_t id = 0;
    db.write("adding input " + facts.path, [&] {
        if (auto existing = find_input(db, "profile", facts.path, digest)) {
            id = *existing;
            return;
        }
        auto insert = db.prepare(
            "INSERT INTO inputs (kind, path, size_bytes, mtime_ns, sha256, alphabet, record_count, residue_count, "
            "embedded, content, added_ms) VALUES ('profile', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        insert.bind(1, facts.path)
            .bind(2, facts.size)
            .bind(3, facts.mtime_ns)
            .bind(4, digest)
            .bind(5, to_string(alphabet))
            .bind(6, model_count)
            .bind(7, match_states)
            .bind(8, embed ? 1 : 0);
        if (embed) insert.bind_blob(9, content.data(), content.size());
        else
            insert.bind_null(9);
        insert.bind(10, now_ms());
        insert.run();
        id = db.last_insert_rowid();
    });
    return id;
}

std::vector<InputInfo> Project::inputs() const {
    std::vector<InputInfo> result;
    auto rows = impl_->db->prepare(std::string("SELECT ") + kInputColumns + " FROM inputs ORDER BY id");
    while (rows.step()) {
        result.push_back(read_input(rows));
        const auto status = impl_->input_status.find(result.back().id);
        if (status != impl_->input_status.end()) result.back().status = status->second;
    }
    return result;
}

InputInfo Project::input(std::int64_t id) const {
    auto row = impl_->db->prepare(std::string("SELECT ") + kInputColumns + " FROM inputs WHERE id = ?");
    row.bind(1, id);
    if (!row.step()) throw Error(impl_->path + ": there is no input " + std::to_string(id) + " in this project");
    InputInfo info = read_input(row);
    const auto status = impl_->input_status.find(id);
    if (status != impl_->input_status.end()) info.status = status->second;
    return info;
}

namespace {

// The file of a referenced input, after making sure it is still the one recorded.
void require_recorded_file(const std::string& project, const InputInfo& info) {
    std::error_code ec;
    if (info.path == "-")
        throw Error(project + ": input " + std::to_string(info.id) +
                    " came from standard input and was too large to keep in the project");
    if (!fs::exists(info.path, ec))
        throw Error(project + ": input " + std::to_string(info.id) + " (" + info.path +
                    ") is missing and was too large to keep in the project");
    if (fs::file_size(info.path, ec) != info.size_bytes || sha256_file(info.path) != info.sha256)
        throw Error(project + ": input " + std::to_string(info.id) + " (" + info.path +
                    ") has changed since it was recorded (its SHA-256 differs)");
}

}  // namespace

std::vector<Sequence> Project::input_sequences(std::int64_t id) const {
    const InputInfo info = input(id);
    if (info.kind != InputKind::SequenceSet)
        throw Error(impl_->path + ": input " + std::to_string(id) + " is a profile, not a sequence set");
    if (!info.embedded) {
        require_recorded_file(impl_->path, info);
        ReadOptions options;
        options.alphabet = parse_alphabet(info.alphabet);
        return read_sequences(info.path, options).records;
    }
    // The recorded count is the file's word, not a promise: it only sizes a
    // first reservation, and a count the rows do not bear out is damage.
    std::vector<Sequence> records;
    records.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(info.record_count, 1u << 16)));
    auto rows = impl_->db->prepare(
        "SELECT name, description, residues, quality FROM input_sequences WHERE input_id = ? ORDER BY ordinal");
    rows.bind(1, id);
    while (rows.step()) records.push_back(Sequence{rows.text(0), rows.text(1), rows.text(2), rows.text(3)});
    if (records.size() != info.record_count)
        throw Error(impl_->path + ": input " + std::to_string(id) + " (" + info.path + ") holds " +
                    std::to_string(records.size()) + " sequences where the project records " +
                    std::to_string(info.record_count) + ": the project file is damaged");
    return records;
}

std::string Project::input_content(std::int64_t id) const {
    const InputInfo info = input(id);
    if (info.kind != InputKind::Profile)
        throw Error(impl_->path + ": input " + std::to_string(id) + " is a sequence set, not a profile file");
    if (info.embedded) {
        auto row = impl_->db->prepare("SELECT content FROM inputs WHERE id = ?");
        row.bind(1, id);
        row.step();
        const auto bytes = row.blob(0);
        return std::string(bytes.begin(), bytes.end());
    }
    require_recorded_file(impl_->path, info);
    std::ifstream file(info.path, std::ios::binary);
    std::ostringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
}

}  // namespace alignscope::store
