// The store::ProjectOptions the GUI suites open their projects with: read-only
// to check what a job wrote, or created when missing. (Named functions rather
// than designated initialisers, which leave members out and warn.)
#pragma once

#include <alignscope/store/project.hpp>

inline alignscope::store::ProjectOptions read_only_project() {
    alignscope::store::ProjectOptions options;
    options.read_only = true;
    return options;
}

inline alignscope::store::ProjectOptions created_project() {
    alignscope::store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}
