// Project inputs: sequence sets and profiles, identified by path and SHA-256,
// embedded up to the size limit and referenced beyond it.
#include "project_impl.hpp"
#include "record_columns.hpp"
#include "sha256.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

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

// The columns of a new input's row, its content last (NULL when not embedded).
std::string insert_input_sql() { return columns::insert(entity::input_columns, "inputs", "", "content"); }

InputInfo new_input(InputKind kind, const FileFacts& facts, const std::string& sha256, std::string alphabet,
                    std::uint64_t records, std::uint64_t residues, bool embedded) {
    InputInfo row;
    row.kind = kind;
    row.path = facts.path;
    row.size_bytes = facts.size;
    row.mtime_ns = facts.mtime_ns;
    row.sha256 = sha256;
    row.alphabet = std::move(alphabet);
    row.record_count = records;
    row.residue_count = residues;
    row.embedded = embedded;
    row.added_ms = now_ms();
    return row;
}

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
        auto insert = db.prepare(insert_input_sql());
        const InputInfo row = new_input(InputKind::SequenceSet, facts, digest, std::string(to_string(set.alphabet)),
                                        set.records.size(), residues, embed);
        columns::bind(entity::input_columns, insert, 1, row);
        insert.bind_null(static_cast<int>(entity::input_columns.size()) +
                         1);  // content: the records go to input_sequences
        insert.run();
        id = db.last_insert_rowid();
        if (!embed) return;
        auto record =
            db.prepare(columns::insert(entity::input_sequence_columns, "input_sequences", "input_id, ordinal"));
        std::int64_t ordinal = 0;
        for (const Sequence& s : set.records) {
            record.bind(1, id).bind(2, ordinal++);
            columns::bind(entity::input_sequence_columns, record, 3, s);
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
        auto insert = db.prepare(insert_input_sql());
        const InputInfo row = new_input(InputKind::Profile, facts, digest, std::string(to_string(alphabet)),
                                        model_count, match_states, embed);
        columns::bind(entity::input_columns, insert, 1, row);
        const int content_at = static_cast<int>(entity::input_columns.size()) + 1;
        if (embed) insert.bind_blob(content_at, content.data(), content.size());
        else
            insert.bind_null(content_at);
        insert.run();
        id = db.last_insert_rowid();
    });
    return id;
}

std::vector<InputInfo> Project::inputs() const {
    std::vector<InputInfo> result;
    auto rows = impl_->db->prepare("SELECT " + columns::list(entity::input_columns) + " FROM inputs ORDER BY id");
    while (rows.step()) {
        result.push_back(columns::read(entity::input_columns, rows));
        const auto status = impl_->input_status.find(result.back().id);
        if (status != impl_->input_status.end()) result.back().status = status->second;
    }
    return result;
}

InputInfo Project::input(std::int64_t id) const {
    auto row = impl_->db->prepare("SELECT " + columns::list(entity::input_columns) + " FROM inputs WHERE id = ?");
    row.bind(1, id);
    if (!row.step()) throw Error(impl_->path + ": there is no input " + std::to_string(id) + " in this project");
    InputInfo info = columns::read(entity::input_columns, row);
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
    auto rows = impl_->db->prepare("SELECT " + columns::list(entity::input_sequence_columns) +
                                   " FROM input_sequences WHERE input_id = ? ORDER BY ordinal");
    rows.bind(1, id);
    while (rows.step()) records.push_back(columns::read(entity::input_sequence_columns, rows));
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
