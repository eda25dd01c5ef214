// SQLite connection, statements and the mapping of result codes to messages.
#include "sqlite.hpp"

#include <alignscope/error.hpp>

#include <algorithm>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

namespace alignscope::store::sqlite {
namespace {

// After the busy timeout has run out this many times in a row, a writer gives
// up: at the default 10 s timeout that is more than a minute of another
// process holding the write lock, which no single project write should take.
constexpr int kBeginAttempts = 6;
// How long a write waits before the wait notice (Connection::set_wait_notice).
constexpr int kFirstWaitMs = 1000;

std::string system_error_text(sqlite3* db) {
    const int code = db ? sqlite3_system_errno(db) : 0;
    return code ? std::string(std::strerror(code)) : std::string();
}

// A path as the path part of a file: URI: every byte but unreserved ones and
// '/' percent-encoded, so '?', '#' and '%' in names survive.
std::string uri_path(const std::string& path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    return out;
}

}  // namespace

Statement::Statement(Statement&& other) noexcept : connection_(other.connection_), statement_(other.statement_) {
    other.statement_ = nullptr;
}

Statement::~Statement() {
    if (statement_) {
        sqlite3_reset(statement_);
        sqlite3_clear_bindings(statement_);
    }
}

Statement& Statement::bind(int index, std::int64_t value) {
    const int rc = sqlite3_bind_int64(statement_, index, value);
    if (rc != SQLITE_OK) connection_->fail(rc, "binding a parameter");
    return *this;
}

Statement& Statement::bind(int index, std::uint64_t value) {
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw Error(connection_->path() + ": the value " + std::to_string(value) + " is too large to store");
    return bind(index, static_cast<std::int64_t>(value));
}

Statement& Statement::bind(int index, double value) {
    const int rc =
        std::isnan(value) ? sqlite3_bind_null(statement_, index) : sqlite3_bind_double(statement_, index, value);
    if (rc != SQLITE_OK) connection_->fail(rc, "binding a parameter");
    return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, std::string_view text) {
    const int rc = sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) connection_->fail(rc, "binding a parameter");
    return *this;
}

Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
    // A zero-length blob must still be a blob, not NULL: SQLite treats a null
    // pointer as NULL, so point at something.
    static const char empty = 0;
    const int rc = sqlite3_bind_blob64(statement_, index, size ? data : &empty, size, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) connection_->fail(rc, "binding a parameter");
    return *this;
}

Statement& Statement::bind_null(int index) {
    const int rc = sqlite3_bind_null(statement_, index);
    if (rc != SQLITE_OK) connection_->fail(rc, "binding a parameter");
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const bool reading = sqlite3_stmt_readonly(statement_) != 0;
    // Reset now so the statement does not keep the failed transaction's locks.
    sqlite3_reset(statement_);
    connection_->fail(rc, reading ? "reading" : "writing");
}

void Statement::run() {
    while (step()) {
    }
    // Ready for the next round of binds (binding a finished statement is misuse).
    sqlite3_reset(statement_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::real(int column) const { return sqlite3_column_double(statement_, column); }

std::optional<double> Statement::optional_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return real(column);
}

std::string Statement::text(int column) const {
    const auto* data = sqlite3_column_text(statement_, column);
    const int size = sqlite3_column_bytes(statement_, column);
    return data ? std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size)) : std::string();
}

std::vector<std::uint8_t> Statement::blob(int column) const {
    const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(statement_, column));
    const int size = sqlite3_column_bytes(statement_, column);
    return data ? std::vector<std::uint8_t>(data, data + size) : std::vector<std::uint8_t>();
}

Connection::Connection(const std::string& path, OpenMode mode, int busy_timeout_ms) : path_(path) {
    int flags = SQLITE_OPEN_NOMUTEX;  // each connection is used by one thread at a time
    std::string name = path;
    switch (mode) {
        case OpenMode::ReadOnly: flags |= SQLITE_OPEN_READONLY; break;
        case OpenMode::ReadOnlyImmutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
            name = "file:" + uri_path(path) + "?immutable=1";
            break;
        case OpenMode::ReadOnlyPrivate: flags |= SQLITE_OPEN_READWRITE; break;
        case OpenMode::ReadWrite: flags |= SQLITE_OPEN_READWRITE; break;
        case OpenMode::ReadWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    }
    const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = system_error_text(db_);
        const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw Error("cannot open project " + path + ": " + (why.empty() ? message : why));
    }
    sqlite3_extended_result_codes(db_, 1);
    set_busy_timeout(busy_timeout_ms);
    if (mode == OpenMode::ReadOnlyPrivate) {
        // Exclusive locking before the first read keeps the WAL index in heap
        // memory; query_only refuses every write on this connection.
        execute("PRAGMA locking_mode = EXCLUSIVE");
        execute("PRAGMA query_only = 1");
    }
}

Connection::~Connection() {
    for (auto& [sql, statement] : cache_) sqlite3_finalize(statement);
    sqlite3_close_v2(db_);
}

bool Connection::read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }

void Connection::set_busy_timeout(int milliseconds) {
    busy_timeout_ms_ = milliseconds;
    sqlite3_busy_timeout(db_, milliseconds);
}

Statement Connection::prepare(std::string_view sql) {
    auto found = cache_.find(sql);
    if (found == cache_.end()) {
        sqlite3_stmt* statement = nullptr;
        const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                          &statement, nullptr);
        if (rc != SQLITE_OK) fail(rc, "preparing a query");
        found = cache_.emplace(std::string(sql), statement).first;
    }
    return Statement(*this, found->second);
}

void Connection::execute(std::string_view sql) {
    sqlite3_stmt* statement = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
    if (rc != SQLITE_OK) fail(rc, "preparing a query");
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
    }
    const bool reading = sqlite3_stmt_readonly(statement) != 0;
    sqlite3_finalize(statement);
    if (rc != SQLITE_DONE) fail(rc, reading ? "reading" : "writing");
}

std::int64_t Connection::query_int(std::string_view sql) {
    Statement statement = prepare(sql);
    if (!statement.step()) return 0;
    return statement.int64(0);
}

int Connection::step_constant(std::string_view sql) {
    sqlite3_stmt* statement = prepare(sql).release();
    const int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int Connection::longest_wait_ms() const {
    return (wait_notice_ ? std::min(busy_timeout_ms_, kFirstWaitMs) : 0) + busy_timeout_ms_ * kBeginAttempts;
}

void Connection::begin_immediate(std::string_view what) {
    // With a notice to give, a first short try: past it the user is told who
    // holds the lock before the long waits begin.
    if (wait_notice_) {
        sqlite3_busy_timeout(db_, std::min(busy_timeout_ms_, kFirstWaitMs));
        const int rc = step_constant("BEGIN IMMEDIATE");
        sqlite3_busy_timeout(db_, busy_timeout_ms_);
        if (rc == SQLITE_OK) return;
        const int primary = rc & 0xFF;
        if (primary != SQLITE_BUSY && primary != SQLITE_LOCKED) fail(rc, what);
        wait_notice_();
    }
    for (int attempt = 1;; ++attempt) {
        const int rc = step_constant("BEGIN IMMEDIATE");
        if (rc == SQLITE_OK) return;
        const int primary = rc & 0xFF;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || attempt >= kBeginAttempts) fail(rc, what);
        // Back off a little so two stalled writers do not retry in lock step.
        std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));
    }
}

void Connection::commit(std::string_view what) {
    for (int attempt = 1;; ++attempt) {
        const int rc = step_constant("COMMIT");
        if (rc == SQLITE_OK) return;
        // A busy COMMIT leaves the transaction open, so it may be retried.
        if ((rc & 0xFF) != SQLITE_BUSY || attempt >= kBeginAttempts) fail(rc, what);
        std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));
    }
}

void Connection::rollback() noexcept {
    if (!in_transaction()) return;
    // Reset every statement first: a pending SELECT would otherwise make the
    // rollback fail with SQLITE_BUSY.
    for (sqlite3_stmt* s = sqlite3_next_stmt(db_, nullptr); s; s = sqlite3_next_stmt(db_, s)) sqlite3_reset(s);
    try {
        step_constant("ROLLBACK");
    } catch (...) {
        // Preparing ROLLBACK failed (out of memory); SQLite rolls back when the
        // connection closes.
    }
}

void Connection::fail(int result_code, std::string_view what) const {
    const int primary = result_code & 0xFF;
    const std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(result_code);
    const int system_errno = db_ ? sqlite3_system_errno(db_) : 0;
    const std::string doing(what);
    if (primary == SQLITE_FULL ||
        (primary == SQLITE_IOERR && (system_errno == ENOSPC || system_errno == EFBIG || system_errno == EDQUOT))) {
        // A read that fails for want of room failed writing the project's
        // shared-memory index (-shm), which SQLite needs even to read.
        if (doing == "reading")
            throw DiskFull(path_ +
                           ": the disk is full (or a file size limit was reached): reading the project needs "
                           "room for its index file " +
                           path_ + "-shm; nothing was changed");
        throw DiskFull(path_ + ": the disk is full (or the project reached its size limit) while " + doing +
                       "; that write was rolled back and everything saved before it is intact");
    }
    switch (primary) {
        case SQLITE_READONLY:
            throw Error(path_ + ": the project is read-only (file or folder permissions) and cannot be changed (" +
                        doing + ")");
        case SQLITE_NOTADB: throw Error(path_ + " is not an AlignScope project: it is not an SQLite database");
        case SQLITE_CORRUPT:
            throw Error(path_ + " is damaged (" + detail + ", while " + doing + "); run `alignscope-cli project " +
                        path_ + " check` and restore it from a backup");
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            throw Error(path_ + " is busy: another process kept it locked for more than " +
                        std::to_string((longest_wait_ms() + 500) / 1000) + " s (" + doing + "); gave up waiting");
        case SQLITE_CANTOPEN:
            throw Error("cannot open project " + path_ + ": " +
                        (system_errno ? std::string(std::strerror(system_errno)) : detail));
        case SQLITE_IOERR:
            throw Error(path_ + ": input/output error while " + doing + " (" +
                        (system_errno ? std::string(std::strerror(system_errno)) : detail) + ")");
        case SQLITE_NOMEM: throw Error(path_ + ": out of memory while " + doing);
        default: throw Error(path_ + ": database error while " + doing + ": " + detail);
    }
}

}  // namespace alignscope::store::sqlite
