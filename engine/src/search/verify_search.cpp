// `search --verify`: the tested scanner against the reference scanner on
// seeded random databases and on real data (see verify_search.hpp).
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/search/verify_search.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>

namespace alignscope {

bool SearchVerifySummary::passed() const {
    return std::all_of(cases.begin(), cases.end(), [](const SearchVerifyCase& c) { return c.passed(); });
}

namespace {

struct Dataset {
    std::vector<Sequence> queries;
    PreparedDatabase database;
};

struct CaseSetup {
    std::string name;
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::string matrix;  // built-in name, or empty for match/mismatch
    int match = 0, mismatch = 0;
    double open = 11, extend = 1;
    AlignOptions options;
    double size = 1.0;  // fraction of the random case size
    bool saturating = false;
    int times = 1;                          // the matrix multiplied by this (schemes past the lane widths' limits)
    std::optional<ScoringScheme> scheme{};  // given whole (real data with the user's scoring)
};

// Query lengths that land on every tile shape's edges (multiples of 4, 32,
// 64 ... +/- 1) and on multi-tile profiles.
constexpr std::int64_t edge_lengths[] = {1,   2,   5,   17,  31,  32,   33,   63,   64,   65,  96,
                                         97,  127, 128, 129, 191, 255,  256,  257,  383,  449, 511,
                                         512, 513, 767, 769, 895, 1023, 1024, 1025, 1537, 2049};

std::string sprinkle(SeededRandom& random, std::string residues, std::string_view letters, double rate) {
    for (char& c : residues)
        if (random.chance(rate)) c = letters[random.index(letters.size())];
    return residues;
}

std::string rare_letters(AlphabetKind alphabet) {
    return alphabet == AlphabetKind::Protein ? "BZXUOJ*" : "NRYSWKMBDHV";
}

Dataset random_dataset(SeededRandom& random, const CaseSetup& setup, std::size_t query_count,
                       std::size_t sequence_count) {
    Dataset data;
    const std::string rare = rare_letters(setup.alphabet);
    for (std::size_t k = 0; k < query_count; ++k) {
        constexpr std::size_t edges = std::size(edge_lengths);
        const std::int64_t length = k < edges ? edge_lengths[(k * 7) % edges] : random.between(1, 1500);
        Sequence q;
        q.id = "query" + std::to_string(k + 1);
        q.residues = sprinkle(random, random_residues(random, setup.alphabet, length), rare, 0.01);
        data.queries.push_back(std::move(q));
    }
    if (setup.saturating) {
        // Self-similar W/C runs score about 10 per residue under BLOSUM62:
        // 3,500 of them pass 32,767, so the 16-bit lanes must saturate. On
        // DNA, 3,500 bases that a match of 1,000,000 takes past 2^31.
        Sequence q;
        q.id = "query-saturating";
        if (setup.alphabet == AlphabetKind::Protein)
            for (int k = 0; k < 3500; ++k) q.residues.push_back(random.chance(0.5) ? 'W' : 'C');
        else
            q.residues = random_residues(random, setup.alphabet, 3500);
        data.queries.push_back(std::move(q));
    }
    std::vector<Sequence> records;
    for (std::size_t k = 0; k < sequence_count; ++k) {
        Sequence s;
        s.id = "seq" + std::to_string(k + 1);
        const double kind = random.unit();
        if (kind < 0.25 && !data.queries.empty()) {
            const Sequence& source = data.queries[random.index(data.queries.size())];
            s.residues = mutate_residues(random, setup.alphabet, source.residues, 0.1 + 0.4 * random.unit(), 0.02);
            if (s.residues.empty()) s.residues = random_residues(random, setup.alphabet, 10);
        } else {
            const double band = random.unit();
            const std::int64_t length = band < 0.08   ? random.between(1, 20)
                                        : band < 0.78 ? random.between(20, 600)
                                        : band < 0.98 ? random.between(600, 2000)
                                                      : random.between(2000, 5000);
            s.residues = random_residues(random, setup.alphabet, length);
        }
        s.residues = sprinkle(random, std::move(s.residues), rare, 0.005);
        records.push_back(std::move(s));
    }
    if (setup.saturating) {
        const std::string& source = data.queries.back().residues;
        records.push_back({"seq-saturating-copy", "", source, ""});
        records.push_back(
            {"seq-saturating-variant", "", mutate_residues(random, setup.alphabet, source, 0.03, 0.002), ""});
    }
    data.database = pack_database(std::move(records), setup.alphabet, "random database (" + setup.name + ")");
    return data;
}

ScoringScheme make_scheme(const CaseSetup& setup) {
    if (setup.scheme) return *setup.scheme;
    const SubstitutionMatrix matrix = setup.matrix.empty()
                                          ? SubstitutionMatrix::match_mismatch(setup.match, setup.mismatch)
                                          : SubstitutionMatrix::builtin(setup.matrix);
    return ScoringScheme::create(setup.times == 1 ? matrix : matrix.scaled(setup.times), setup.open, setup.extend);
}

std::vector<CaseSetup> random_case_setups() {
    AlignOptions local;
    local.mode = AlignmentMode::Local;
    AlignOptions global;
    global.mode = AlignmentMode::Global;
    AlignOptions overlap;
    overlap.mode = AlignmentMode::SemiGlobal;
    AlignOptions glocal = overlap;
    glocal.free_ends = FreeEndGaps::parse("qb,qe");
    // Semi-global ends the others leave out: the target inside the query, the
    // two dovetails, and free ends on one side only.
    auto ends = [&](const char* spec) {
        AlignOptions o = overlap;
        o.free_ends = FreeEndGaps::parse(spec);
        return o;
    };
    std::vector<CaseSetup> cases = {
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 11, 1, local, 1.0, true},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, local, 0.5, false},
        {"", AlphabetKind::Protein, "BLOSUM45", 0, 0, 16, 2, local, 0.5, false},
        {"", AlphabetKind::Protein, "PAM30", 0, 0, 10, 1, local, 0.5, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 4, 4, local, 0.5, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 10, 0.5, local, 0.5, false},
        {"", AlphabetKind::Dna, "EDNAFULL", 0, 0, 16, 6, local, 0.5, false},
        {"", AlphabetKind::Dna, "", 2, -3, 7, 2, local, 0.5, false},
        // Global and semi-global: every tile shape and multi-tile profiles
        // (full size), scores past 32,767 (the saturating W/C query against
        // itself) and below the 16-bit cells' floor (long DNA with extend 6),
        // linear gaps, and every kind of free end.
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, global, 1.0, true},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 4, 4, global, 0.25, false},
        {"", AlphabetKind::Protein, "BLOSUM45", 0, 0, 16, 2, global, 0.25, false},
        {"", AlphabetKind::Dna, "EDNAFULL", 0, 0, 16, 6, global, 0.5, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, overlap, 1.0, true},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, glocal, 0.25, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, ends("tb,te"), 0.25, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, ends("qb,te"), 0.25, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 12, 1, ends("tb,qe"), 0.25, false},
        {"", AlphabetKind::Protein, "PAM30", 0, 0, 10, 1, ends("qe"), 0.25, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 4, 4, ends("te"), 0.25, false},
        {"", AlphabetKind::Dna, "", 2, -3, 7, 2, ends("qb"), 0.25, false},
        {"", AlphabetKind::Dna, "EDNAFULL", 0, 0, 16, 6, ends("tb"), 0.5, false},
        // Extreme schemes: substitution scores and penalties near and past
        // every lane width's limits, up to the accepted maximum penalty.
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 11, 1, local, 0.1, false, 64},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 11, 1, global, 0.1, false, 512},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 65536, 65536, local, 0.1, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 1000000, 1000000, local, 0.1, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 1000000, 1, global, 0.1, false},
        {"", AlphabetKind::Dna, "", 64, -1, 10, 0.5, local, 0.1, false},
        {"", AlphabetKind::Dna, "", 2, -3, 5000, 5000, ends("qb,te"), 0.1, false},
        // Past the GPU's 32-bit cells yet inside the scan's 32-bit scores:
        // global penalties of 200,000 put every pair of more than about 1,340
        // residues in all below the cells' floor (a GPU scores those on its
        // 64-bit host path); a match of 100,000 (200,000 scaled with half-step
        // penalties) and BLOSUM62 x4096 (entries past 16 bits) run on the
        // 32-bit cells with scores in the hundreds of millions.
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 200000, 200000, global, 0.1, false},
        {"", AlphabetKind::Dna, "", 100000, -100000, 0.5, 0.5, local, 0.1, false},
        {"", AlphabetKind::Protein, "BLOSUM62", 0, 0, 11, 1, ends("qb,te"), 0.1, false, 4096},
        // Past 32-bit scores: a match of 1,000,000 takes the 3,500-base query
        // and its copy to 3.5 x 10^9, and penalties of 1,000,000 put long
        // global pairs below -2^31; every device scores those in 64 bits.
        {"", AlphabetKind::Dna, "", 1000000, -1000000, 1000000, 1000000, local, 0.1, true},
        {"", AlphabetKind::Dna, "", 1000000, -1000000, 1000000, 1000000, global, 0.1, true},
    };
    for (CaseSetup& c : cases) {
        std::ostringstream name;
        name.precision(12);  // penalties as typed: 1000000, not 1e+06
        name << "random " << to_string(c.alphabet) << ' '
             << (c.matrix.empty() ? "match " + std::to_string(c.match) + "/" + std::to_string(c.mismatch) : c.matrix)
             << (c.times == 1 ? "" : " x" + std::to_string(c.times)) << " gap " << c.open << '/' << c.extend << ' '
             << to_string(c.options.mode);
        if (c.options.mode == AlignmentMode::SemiGlobal) name << '[' << c.options.free_ends.to_string() << ']';
        c.name = name.str();
    }
    return cases;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void run_case(const ScannerRegistry& registry, const SearchVerifyOptions& options, const CaseSetup& setup,
              const Dataset& data, const SearchVerifyCallbacks& callbacks, JobContext& context,
              SearchVerifySummary& summary) {
    SearchVerifyCase result;
    result.name = setup.name;
    result.queries = data.queries.size();
    result.sequences = data.database.size();
    ScanSetup scan;
    scan.scheme = make_scheme(setup);
    scan.options = setup.options;
    scan.options.traceback = false;
    scan.threads = options.threads;
    scan.streams = options.streams;
    scan.gpu_memory_budget = options.gpu_memory_budget;
    for (const std::string& id : registry.resolve(options.device)) {
        const ScanCapability can = registry.capability(id, scan);
        if (!can.supported) {
            result.skipped = true;
            result.skip_reason = id + ": " + can.reason;
        }
    }
    if (result.skipped) {
        summary.cases.push_back(result);
        if (callbacks.case_done) callbacks.case_done(result);
        return;
    }
    const PreparedDatabase& db = data.database;
    std::vector<EncodedSequence> encoded;
    std::vector<const EncodedSequence*> pointers;
    for (const Sequence& q : data.queries) {
        encoded.push_back(encode(q.residues, scan.scheme.matrix, "query '" + q.id + "'"));
        result.cells += q.residues.size() * db.residue_count();
    }
    for (const EncodedSequence& e : encoded) pointers.push_back(&e);

    auto run = [&](const std::string& spec, std::vector<std::int64_t>& scores, double& seconds, ScanStats* stats) {
        auto scanner = registry.create(spec);
        const auto start = std::chrono::steady_clock::now();
        scanner->load(db, scan, context);
        scores.assign(encoded.size() * db.size(), 0);
        scanner->scan(pointers, scores, context);
        seconds = seconds_since(start);
        if (stats) *stats = scanner->last_stats();
        return scanner->info().id;
    };
    std::vector<std::int64_t> tested, reference;
    ScanStats stats;
    summary.tested_device = run(options.device, tested, result.tested_seconds, &stats);
    summary.reference_device = run(options.reference, reference, result.reference_seconds, nullptr);
    result.tested_kernels = stats.kernels;
    result.recomputed = stats.recomputed;

    const std::vector<std::uint8_t> db_codes = encode_database(db, scan.scheme.matrix);
    int reported = 0;
    auto problem = [&](const std::string& text) {
        if (reported++ < 5 && callbacks.mismatch) callbacks.mismatch(setup.name + ": " + text);
    };
    for (std::size_t q = 0; q < data.queries.size(); ++q) {
        context.throw_if_cancelled();
        bool failed = false;
        const std::span<const std::int64_t> t_row(tested.data() + q * db.size(), db.size());
        const std::span<const std::int64_t> r_row(reference.data() + q * db.size(), db.size());
        for (std::size_t p = 0; p < db.size(); ++p) {
            ++result.scores_compared;
            if (t_row[p] == r_row[p]) continue;
            ++result.score_mismatches;
            failed = true;
            problem("query '" + data.queries[q].id + "' (" + std::to_string(data.queries[q].residues.size()) +
                    " residues) against '" + db.ids[p] + "' (" + std::to_string(db.length(p)) +
                    "): " + summary.tested_device + " scored " + std::to_string(t_row[p]) + ", " +
                    summary.reference_device + " " + std::to_string(r_row[p]));
        }
        const auto t_top = top_positions(t_row, db, options.top);
        const auto r_top = top_positions(r_row, db, options.top);
        std::vector<std::int64_t> t_scores, r_scores;
        for (std::size_t p : t_top) t_scores.push_back(t_row[p]);
        for (std::size_t p : r_top) r_scores.push_back(r_row[p]);
        if (t_scores != r_scores) {
            failed = true;
            problem("query '" + data.queries[q].id + "': the top-" + std::to_string(options.top) + " scores differ");
        }
        // The scalar reference on the best hits: independent of both scanners.
        for (std::size_t k = 0; k < std::min(options.spot_checks, t_top.size()); ++k) {
            const std::size_t p = t_top[k];
            const ScoreAndEnd ref =
                score_forward(encoded[q].data(), static_cast<std::int64_t>(encoded[q].size()),
                              db_codes.data() + db.offsets[p], db.length(p), scan.scheme, scan.options);
            ++result.spot_checked;
            if (ref.score != t_row[p]) {
                ++result.spot_failed;
                failed = true;
                problem("query '" + data.queries[q].id + "' against '" + db.ids[p] + "': the scalar reference scores " +
                        std::to_string(ref.score) + ", " + summary.tested_device + " " + std::to_string(t_row[p]));
            }
        }
        if (failed) ++result.queries_failed;
    }
    summary.cases.push_back(result);
    if (callbacks.case_done) callbacks.case_done(result);
}

}  // namespace

SearchVerifySummary verify_search(const ScannerRegistry& registry, const SearchVerifyOptions& options,
                                  const SearchVerifyCallbacks& callbacks, JobContext& context) {
    if (options.top == 0) throw Error("--top must be at least 1");
    SearchVerifySummary summary;
    summary.tested_device = options.device;
    summary.reference_device = options.reference;
    (void)registry.resolve(options.device);  // fail early on a bad --device
    (void)registry.resolve(options.reference);
    if (options.random_cases) {
        if (options.random_queries == 0 || options.random_sequences == 0)
            throw Error("search --verify: random cases need at least one query and one database sequence");
        SeededRandom random(options.seed);
        for (const CaseSetup& setup : random_case_setups()) {
            context.throw_if_cancelled();
            // Each case draws from the same generator: a skipped mode still draws
            // its data, so a case's data does not depend on the modes asked for.
            const bool wanted = options.modes.empty() || std::find(options.modes.begin(), options.modes.end(),
                                                                   setup.options.mode) != options.modes.end();
            const auto queries =
                std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(options.random_queries) *
                                                                  setup.size));
            const auto sequences =
                std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(options.random_sequences) *
                                                                  setup.size));
            const Dataset data = random_dataset(random, setup, queries, sequences);
            if (wanted) run_case(registry, options, setup, data, callbacks, context, summary);
        }
    }
    if (!options.query_path.empty() || !options.database_path.empty()) {
        if (options.query_path.empty() || options.database_path.empty())
            throw Error("search --verify: real data needs both -q QUERIES and -d DATABASE");
        Dataset data;
        SequenceSet queries = read_sequences(options.query_path);
        if (options.real_queries && queries.records.size() > options.real_queries)
            queries.records.resize(options.real_queries);
        data.queries = std::move(queries.records);
        DatabaseCacheOptions cache;
        cache.directory = options.database_cache_directory;
        PreparedDatabase db = prepare_database(options.database_path, cache).database;
        if (options.real_sequences && options.real_sequences < db.size()) {
            std::vector<std::size_t> keep;
            for (std::size_t p = 0; p < db.size(); ++p)
                if (db.file_index[p] < options.real_sequences) keep.push_back(p);
            db = db.subset(keep);
        }
        data.database = std::move(db);
        const std::vector<AlignmentMode> modes =
            options.modes.empty() ? std::vector<AlignmentMode>{AlignmentMode::Local} : options.modes;
        for (AlignmentMode mode : modes) {
            context.throw_if_cancelled();
            CaseSetup setup;
            setup.alphabet = data.database.alphabet;
            setup.matrix = setup.alphabet == AlphabetKind::Protein ? "BLOSUM62" : "EDNAFULL";
            setup.open = setup.alphabet == AlphabetKind::Protein ? 11 : 16;
            setup.extend = setup.alphabet == AlphabetKind::Protein ? 1 : 6;
            if (options.real_scheme) setup.scheme = options.real_scheme(setup.alphabet);
            setup.options.mode = mode;
            setup.options.free_ends = options.real_free_ends;
            std::ostringstream name;
            name.precision(12);  // penalties as typed: 1000000, not 1e+06
            name << "real " << data.queries.size() << " queries of " << options.query_path << " against "
                 << data.database.size() << " sequences of " << options.database_path << ", ";
            if (setup.scheme) name << setup.scheme->describe();
            else
                name << setup.matrix << " gap " << setup.open << '/' << setup.extend;
            name << ' ' << describe_mode(setup.options);
            setup.name = name.str();
            run_case(registry, options, setup, data, callbacks, context, summary);
        }
    }
    if (summary.cases.empty()) throw Error("search --verify: nothing to check (no random cases and no real data)");
    return summary;
}

}  // namespace alignscope
