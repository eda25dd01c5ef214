// A thin layer over SQLite's C API for the project store: one connection with
// cached prepared statements, write transactions that wait for (and retry
// behind) other writers, and SQLite result codes turned into alignscope::Error
// messages that name the project file and what was being done.
#pragma once

#include <alignscope/error.hpp>

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::store::sqlite {

class Connection;

// A borrowed prepared statement. Binding indices are 1-based, columns 0-based
// (SQLite's own conventions). The destructor resets the statement, so a
// half-read SELECT never keeps a read transaction (and an old snapshot) open.
class Statement {
public:
    Statement(Connection& connection, sqlite3_stmt* statement) : connection_(&connection), statement_(statement) {}
    Statement(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement& operator=(Statement&&) = delete;
    ~Statement();
    // Hands back the raw statement without resetting it later.
    sqlite3_stmt* release() {
        sqlite3_stmt* s = statement_;
        statement_ = nullptr;
        return s;
    }

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
    Statement& bind(int index, std::uint64_t value);  // throws Error above INT64_MAX
    Statement& bind(int index, double value);         // NaN is stored as NULL
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, std::optional<double> value);
    Statement& bind_blob(int index, const void* data, std::size_t size);
    Statement& bind_null(int index);

    // Steps once: true when a row is ready, false when done. Throws Error.
    bool step();
    // Steps to the end (for statements that return no rows).
    void run();

    bool is_null(int column) const;
    std::int64_t int64(int column) const;
    double real(int column) const;
    std::optional<double> optional_real(int column) const;
    std::string text(int column) const;
    std::vector<std::uint8_t> blob(int column) const;

private:
    Connection* connection_;
    sqlite3_stmt* statement_;
};

// ReadOnlyImmutable: for a file in a folder nobody can write (read-only media):
// SQLite then needs no -shm file and takes no locks, which is safe because no
// writer can exist there either. ReadOnlyPrivate: reads with the file locked
// for this connection alone and the write-ahead log's index in memory, so
// nothing is written beside the file (no -shm): for reading a project where
// there is no room for that index (a full disk); busy while another
// connection has the project open.
enum class OpenMode { ReadOnly, ReadOnlyImmutable, ReadOnlyPrivate, ReadWrite, ReadWriteCreate };

// A write refused for want of room (a full disk, a quota, a file size limit).
class DiskFull : public Error {
public:
    using Error::Error;
};

class Connection {
public:
    // Opens the database file. Nothing is read yet (SQLite reads lazily), so a
    // file that is not a database fails on the first statement, not here.
    Connection(const std::string& path, OpenMode mode, int busy_timeout_ms);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    bool read_only() const;
    int busy_timeout_ms() const { return busy_timeout_ms_; }
    void set_busy_timeout(int milliseconds);
    // Called once a write has waited a second for another process's lock, before
    // it waits longer (to tell the user who is waited for); may read the database.
    void set_wait_notice(std::function<void()> notice) { wait_notice_ = std::move(notice); }
    // The longest a write waits for another process's lock before Error.
    int longest_wait_ms() const;

    // A cached prepared statement for constant SQL text (parameters bound, never
    // spliced in).
    Statement prepare(std::string_view sql);
    // Runs constant SQL text without parameters or rows (schema, pragmas).
    void execute(std::string_view sql);
    // The first column of the first row of a constant query, e.g. "PRAGMA user_version".
    std::int64_t query_int(std::string_view sql);

    // Runs `body` inside BEGIN IMMEDIATE ... COMMIT. Waiting for another writer
    // is SQLite's busy timeout; past it the BEGIN is retried a few more times
    // before giving up with Error. An exception from `body` rolls back. Called
    // inside an open transaction, `body` simply joins it.
    template <class Body>
    void write(std::string_view what, Body&& body) {
        if (in_transaction()) {
            body();
            return;
        }
        begin_immediate(what);
        try {
            body();
            commit(what);
        } catch (...) {
            rollback();
            throw;
        }
    }
    bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
    void rollback() noexcept;

    std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
    int changes() const { return sqlite3_changes(db_); }

    // Throws Error for a failed SQLite call: the message names the project file,
    // the activity (`what`) and the cause in a user's words (disk full,
    // read-only, busy, damaged, not a database).
    [[noreturn]] void fail(int result_code, std::string_view what) const;

private:
    // Steps a cached constant statement once and resets it; returns the result code.
    int step_constant(std::string_view sql);
    void begin_immediate(std::string_view what);
    void commit(std::string_view what);

    std::string path_;
    sqlite3* db_ = nullptr;
    int busy_timeout_ms_ = 0;
    std::function<void()> wait_notice_;
    std::map<std::string, sqlite3_stmt*, std::less<>> cache_;
};

}  // namespace alignscope::store::sqlite
