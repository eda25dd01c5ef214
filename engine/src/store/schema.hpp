// The project schema as a list of forward-only migration steps: step k takes a
// file from PRAGMA user_version k to k + 1. A new file is built by running every
// step from 0, so the path that creates projects is the path that upgrades them.
#pragma once

#include "sqlite.hpp"

#include <cstdint>

namespace alignscope::store::schema {

// PRAGMA application_id of every project: "ALSP". A database with another id is
// another program's and is never touched.
constexpr std::int64_t application_id = 0x414C5350;

// The newest version the steps reach (Project::schema_version).
int latest_version();

// Runs steps from `from` up to `to` in one transaction and sets user_version.
// The version is re-read inside the transaction, so two processes opening an
// old file at once migrate it once.
void migrate(sqlite::Connection& db, int to);

}  // namespace alignscope::store::schema
