// The stored profile search ("alignscope profile search 1") written and read
// with nlohmann-json (stored_search.hpp). Reading is lenient as the format has
// always been read: a missing or mistyped field takes its default.
#include <alignscope/error.hpp>
#include <alignscope/profile/stored_search.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <utility>

namespace alignscope::profile {

namespace {

using nlohmann::json;

json settings_json(const PipelineSettings& p) {
    json o{{"F1", p.F1},
           {"F2", p.F2},
           {"F3", p.F3},
           {"bias_filter", p.bias_filter},
           {"null2", p.null2},
           {"E", p.report_E},
           {"domE", p.domain_E},
           {"incE", p.include_E},
           {"incdomE", p.include_domain_E},
           {"seed", static_cast<double>(p.seed)}};
    if (p.report_T) o["T"] = *p.report_T;
    if (p.domain_T) o["domT"] = *p.domain_T;
    if (p.Z) o["Z"] = *p.Z;
    if (p.domZ) o["domZ"] = *p.domZ;
    return o;
}

json domain_json(const DomainHit& d) {
    const DomainAlignment& a = d.alignment;
    return {{"env_from", d.env_from},
            {"env_to", d.env_to},
            {"score", d.score},
            {"bias", d.bias},
            {"lnP", d.lnP},
            {"expected_accuracy", d.expected_accuracy},
            {"included", d.included},
            {"reported", d.reported},
            {"model_line", a.model},
            {"match_line", a.match},
            {"target_line", a.target},
            {"pp_line", a.posterior},
            {"rf_line", a.reference},
            {"cs_line", a.structure},
            {"hmm_from", a.hmm_from},
            {"hmm_to", a.hmm_to},
            {"ali_from", a.target_from},
            {"ali_to", a.target_to}};
}

json hit_json(const TargetHit& h) {
    json domains = json::array();
    for (const DomainHit& d : h.domains) domains.push_back(domain_json(d));
    return {{"target", static_cast<double>(h.target)},
            {"name", h.name},
            {"description", h.description},
            {"length", h.length},
            {"score", h.score},
            {"pre_score", h.pre_score},
            {"lnP", h.lnP},
            {"expected_domains", h.expected_domains},
            {"included", h.included},
            {"regions", h.regions},
            {"clustered", h.clustered},
            {"overlaps", h.overlaps},
            {"envelopes", h.envelopes},
            {"best_domain", h.best_domain},
            {"reported_domains", h.reported_domains},
            {"domains", std::move(domains)}};
}

json model_json(const StoredModel& m) {
    json hits = json::array();
    for (const TargetHit& h : m.search.hits) hits.push_back(hit_json(h));
    const PipelineCounts& c = m.search.counts;
    return {{"name", m.name},
            {"accession", m.accession},
            {"description", m.description},
            {"length", m.length},
            {"Z", m.search.Z},
            {"domZ", m.search.domZ},
            {"reported", m.search.reported},
            {"included", m.search.included},
            {"seconds", m.search.seconds},
            {"pipeline",
             {{"targets", static_cast<double>(c.targets)},
              {"residues", static_cast<double>(c.residues)},
              {"passed_msv", static_cast<double>(c.past_msv)},
              {"passed_bias", static_cast<double>(c.past_bias)},
              {"passed_viterbi", static_cast<double>(c.past_viterbi)},
              {"passed_forward", static_cast<double>(c.past_forward)}}},
            {"hits", std::move(hits)}};
}

// ---- reading: each field as the format's first reader took it ------------

const json* field(const json& o, const char* key) {
    if (!o.is_object()) return nullptr;
    const auto found = o.find(key);
    return found == o.end() ? nullptr : &*found;
}

double number(const json& o, const char* key, double fallback = 0) {
    const json* v = field(o, key);
    return v && v->is_number() ? v->get<double>() : fallback;
}

// A whole number that fits, else `fallback` (never an out-of-range conversion).
template <typename T>
T whole(const json& o, const char* key, T fallback = 0) {
    const double v = number(o, key, std::numeric_limits<double>::quiet_NaN());
    if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(std::numeric_limits<T>::lowest()) ||
        v >= static_cast<double>(std::numeric_limits<T>::max()))
        return fallback;
    return static_cast<T>(v);
}

bool flag(const json& o, const char* key, bool fallback) {
    const json* v = field(o, key);
    return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::string text(const json& o, const char* key) {
    const json* v = field(o, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

const json& member(const json& o, const char* key) {
    static const json none;
    const json* v = field(o, key);
    return v ? *v : none;
}

PipelineSettings settings_from(const json& o) {
    PipelineSettings p;
    p.F1 = number(o, "F1", p.F1);
    p.F2 = number(o, "F2", p.F2);
    p.F3 = number(o, "F3", p.F3);
    p.bias_filter = flag(o, "bias_filter", true);
    p.null2 = flag(o, "null2", true);
    p.report_E = number(o, "E", p.report_E);
    p.domain_E = number(o, "domE", p.domain_E);
    p.include_E = number(o, "incE", p.include_E);
    p.include_domain_E = number(o, "incdomE", p.include_domain_E);
    p.seed = whole<std::uint32_t>(o, "seed", 42);
    if (field(o, "T")) p.report_T = number(o, "T");
    if (field(o, "domT")) p.domain_T = number(o, "domT");
    if (field(o, "Z")) p.Z = number(o, "Z");
    if (field(o, "domZ")) p.domZ = number(o, "domZ");
    return p;
}

DomainHit domain_from(const json& o) {
    DomainHit d;
    d.env_from = whole<int>(o, "env_from");
    d.env_to = whole<int>(o, "env_to");
    d.score = static_cast<float>(number(o, "score"));
    d.bias = static_cast<float>(number(o, "bias"));
    d.lnP = number(o, "lnP");
    d.expected_accuracy = static_cast<float>(number(o, "expected_accuracy"));
    d.reported = flag(o, "reported", true);
    d.included = flag(o, "included", false);
    DomainAlignment& a = d.alignment;
    a.model = text(o, "model_line");
    a.match = text(o, "match_line");
    a.target = text(o, "target_line");
    a.posterior = text(o, "pp_line");
    a.reference = text(o, "rf_line");
    a.structure = text(o, "cs_line");
    a.hmm_from = whole<int>(o, "hmm_from");
    a.hmm_to = whole<int>(o, "hmm_to");
    a.target_from = whole<int>(o, "ali_from");
    a.target_to = whole<int>(o, "ali_to");
    return d;
}

TargetHit hit_from(const json& o) {
    TargetHit h;
    h.target = whole<std::size_t>(o, "target");
    h.name = text(o, "name");
    h.description = text(o, "description");
    h.length = whole<int>(o, "length");
    h.score = static_cast<float>(number(o, "score"));
    h.pre_score = static_cast<float>(number(o, "pre_score"));
    h.lnP = number(o, "lnP");
    h.expected_domains = static_cast<float>(number(o, "expected_domains"));
    h.included = flag(o, "included", false);
    h.reported = true;  // only reported targets are kept
    h.regions = whole<int>(o, "regions");
    h.clustered = whole<int>(o, "clustered");
    h.overlaps = whole<int>(o, "overlaps");
    h.envelopes = whole<int>(o, "envelopes");
    h.best_domain = whole<int>(o, "best_domain");
    h.reported_domains = whole<int>(o, "reported_domains");
    const json& domains = member(o, "domains");
    if (domains.is_array())
        for (const json& d : domains) h.domains.push_back(domain_from(d));
    return h;
}

StoredModel model_from(const json& o) {
    StoredModel m;
    m.name = text(o, "name");
    m.accession = text(o, "accession");
    m.description = text(o, "description");
    m.length = whole<int>(o, "length");
    ModelSearch& s = m.search;
    s.name = m.name;
    s.accession = m.accession;
    s.description = m.description;
    s.model_length = m.length;
    s.Z = number(o, "Z");
    s.domZ = number(o, "domZ");
    s.reported = whole<int>(o, "reported");
    s.included = whole<int>(o, "included");
    s.seconds = number(o, "seconds");
    const json& c = member(o, "pipeline");
    s.counts.targets = whole<std::uint64_t>(c, "targets");
    s.counts.residues = whole<std::uint64_t>(c, "residues");
    s.counts.past_msv = whole<std::uint64_t>(c, "passed_msv");
    s.counts.past_bias = whole<std::uint64_t>(c, "passed_bias");
    s.counts.past_viterbi = whole<std::uint64_t>(c, "passed_viterbi");
    s.counts.past_forward = whole<std::uint64_t>(c, "passed_forward");
    const json& hits = member(o, "hits");
    if (hits.is_array())
        for (const json& h : hits) s.hits.push_back(hit_from(h));
    return m;
}

}  // namespace

StoredModel stored_model(const ProfileHmm& hmm, ModelSearch search) {
    StoredModel m;
    m.name = hmm.name;
    m.accession = hmm.accession;
    m.description = hmm.description;
    m.length = hmm.length;
    std::vector<TargetHit> kept;
    for (TargetHit& hit : search.hits)
        if (hit.reported) kept.push_back(std::move(hit));
    search.hits = std::move(kept);
    m.search = std::move(search);
    return m;
}

std::string stored_search_json(const StoredSearch& r) {
    json models = json::array();
    for (const StoredModel& m : r.models) models.push_back(model_json(m));
    const json o{{"format", kStoredSearchFormat}, {"profile", r.profile_label},
                 {"targets", r.targets_label},    {"device", r.device},
                 {"seconds", r.seconds},          {"settings", settings_json(r.settings)},
                 {"models", std::move(models)}};
    return o.dump();
}

std::string stored_search_parameters(const StoredSearch& r, const std::string& command_line) {
    json o = settings_json(r.settings);
    o["profile"] = r.profile_label;
    o["targets"] = r.targets_label;
    o["device"] = r.device;
    if (!command_line.empty()) o["command_line"] = command_line;
    return o.dump();
}

StoredSearch read_stored_search(std::string_view text_in) {
    const json o = json::parse(text_in.begin(), text_in.end(), nullptr, false);
    if (o.is_discarded()) throw Error("the stored profile search cannot be read: it is not valid JSON");
    if (!o.is_object() || text(o, "format") != kStoredSearchFormat)
        throw Error("the stored profile search cannot be read: its format is not '" + std::string(kStoredSearchFormat) +
                    "'");
    StoredSearch r;
    r.profile_label = text(o, "profile");
    r.targets_label = text(o, "targets");
    r.device = text(o, "device");
    r.seconds = number(o, "seconds");
    r.settings = settings_from(member(o, "settings"));
    const json& models = member(o, "models");
    if (models.is_array())
        for (const json& m : models) r.models.push_back(model_from(m));
    return r;
}

}  // namespace alignscope::profile
