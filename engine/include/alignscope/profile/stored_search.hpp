// A profile HMM search as a project keeps it: the JSON document of an analysis
// of kind "profile_search" (format "alignscope profile search 1") and its
// parameters, written by `hmmsearch --project` and the workbench alike, and read back.
#pragma once

#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace alignscope::profile {

// The "format" field every stored profile search opens with.
inline constexpr std::string_view kStoredSearchFormat = "alignscope profile search 1";

// One model's part: what names the model, and its search with only the
// reported targets (each with all its domains: the tables count them, the
// workbench shows the reported ones).
struct StoredModel {
    std::string name, accession, description;
    int length = 0;  // match states
    ModelSearch search;
};

struct StoredSearch {
    std::string profile_label;  // "globins4.hmm"
    std::string targets_label;  // "globins45.fa", "globins45.fa (45 sequences)"
    std::string device;         // the profile scanner's id: "cpu", "gpu:0"
    double seconds = 0;         // the whole run
    PipelineSettings settings;  // what is kept of them: filters, thresholds but incT/incdomT, Z, domZ, seed
    std::vector<StoredModel> models;
};

// The model's names and `search` less the targets that were not reported.
StoredModel stored_model(const ProfileHmm& hmm, ModelSearch search);

// The results document (compact JSON). Every field name and value is the
// one the format has always had, so projects written before read the same.
std::string stored_search_json(const StoredSearch& search);

// The analysis's parameters (compact JSON): the settings, the labels and the
// device, and `command_line` when not empty (a run from the command line).
std::string stored_search_parameters(const StoredSearch& search, const std::string& command_line = {});

// Reads a results document back. Fields an older writer left out take their
// defaults; hits are reported ones. Throws Error when the text is not JSON or
// not a stored profile search.
StoredSearch read_stored_search(std::string_view json);

}  // namespace alignscope::profile
