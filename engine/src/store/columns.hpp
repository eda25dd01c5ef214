// Column tables of the store: an entity's columns named once, in order, each
// with how its value is read into the entity and bound from it. The SELECT
// list, the INSERT and the reading and binding of a row all come from the
// table, so no column index is written by hand and no column is named twice.
#pragma once

#include "sqlite.hpp"

#include <alignscope/align/alignment.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::store::columns {

template <class Row>
struct Column {
    std::string_view name;
    void (*read)(const sqlite::Statement& statement, int index, Row& row);
    void (*write)(sqlite::Statement& statement, int index, const Row& row);
};

// A column's value into a field of its own type, and back.
inline void assign(std::string& field, const sqlite::Statement& s, int i) { field = s.text(i); }
inline void assign(std::int64_t& field, const sqlite::Statement& s, int i) { field = s.int64(i); }
inline void assign(std::uint64_t& field, const sqlite::Statement& s, int i) {
    field = static_cast<std::uint64_t>(s.int64(i));
}
inline void assign(int& field, const sqlite::Statement& s, int i) { field = static_cast<int>(s.int64(i)); }
inline void assign(double& field, const sqlite::Statement& s, int i) { field = s.real(i); }
inline void assign(std::optional<double>& field, const sqlite::Statement& s, int i) { field = s.optional_real(i); }
inline void assign(AlignmentMode& field, const sqlite::Statement& s, int i) { field = parse_mode(s.text(i)); }

template <class Field>
void put(sqlite::Statement& s, int i, const Field& field) {
    s.bind(i, field);
}
inline void put(sqlite::Statement& s, int i, AlignmentMode mode) { s.bind(i, to_string(mode)); }

template <class Row, class Field, Field Row::*Member>
void read_member(const sqlite::Statement& s, int i, Row& row) {
    assign(row.*Member, s, i);
}
template <class Row, class Field, Field Row::*Member>
void write_member(sqlite::Statement& s, int i, const Row& row) {
    put(s, i, row.*Member);
}

// Column `name` holding member `Member` (a data member pointer of Row).
template <auto Member, class Row, class Field>
constexpr Column<Row> field_of(std::string_view name, Field Row::*) {
    return {name, &read_member<Row, Field, Member>, &write_member<Row, Field, Member>};
}
template <auto Member>
constexpr auto field(std::string_view name) {
    return field_of<Member>(name, Member);
}

// "a, b, c": the table's columns for a SELECT.
template <class Row, std::size_t N>
std::string list(const std::array<Column<Row>, N>& table) {
    std::string out;
    for (const auto& c : table) {
        if (!out.empty()) out += ", ";
        out += c.name;
    }
    return out;
}

// "INSERT INTO <into> (<leading>, <the table's columns>, <trailing>) VALUES
// (?, ...)": `leading` names the columns bound before the row's (the job and
// ordinal), `trailing` those bound after them; either may be empty.
template <class Row, std::size_t N>
std::string insert(const std::array<Column<Row>, N>& table, std::string_view into, std::string_view leading,
                   std::string_view trailing = {}) {
    auto count = [](std::string_view names) {
        return names.empty() ? std::size_t{0} : std::size_t(std::count(names.begin(), names.end(), ',')) + 1;
    };
    std::string marks;
    for (std::size_t k = 0; k < count(leading) + N + count(trailing); ++k) marks += k ? ", ?" : "?";
    std::string names = std::string(leading);
    if (!names.empty()) names += ", ";
    names += list(table);
    if (!trailing.empty()) names += ", " + std::string(trailing);
    return "INSERT INTO " + std::string(into) + " (" + names + ") VALUES (" + marks + ")";
}

// The statement's current row, its columns in the table's order.
template <class Row, std::size_t N>
Row read(const std::array<Column<Row>, N>& table, const sqlite::Statement& statement) {
    Row row{};
    for (std::size_t k = 0; k < N; ++k) table[k].read(statement, static_cast<int>(k), row);
    return row;
}

// Binds `row` to the statement's parameters first, first + 1, ... (1-based).
template <class Row, std::size_t N>
void bind(const std::array<Column<Row>, N>& table, sqlite::Statement& statement, int first, const Row& row) {
    for (std::size_t k = 0; k < N; ++k) table[k].write(statement, first + static_cast<int>(k), row);
}

// Every row a statement gives, each made by `read_row(statement)`.
template <class Row, class ReadRow>
std::vector<Row> all_rows(sqlite::Statement& statement, ReadRow&& read_row) {
    std::vector<Row> out;
    while (statement.step()) out.push_back(read_row(statement));
    return out;
}

}  // namespace alignscope::store::columns
