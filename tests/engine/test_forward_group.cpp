// Grouped Forward and Backward (up to eight targets side by side in AVX or
// AVX-512 registers) against forward() and backward() of each target alone,
// which must agree to the last bit: scores, scale factors, every special
// state, every row of M and I and the rows of D that are kept, for
// hmmer-examples' models, multihit and unihit, parser and full matrices (and
// full ones keeping D in two rows, as envelopes are rescored), over targets
// from a fixed seed: random and consensus-like residues, empty and
// one-residue targets, ties, and targets longer than the model. The choice
// of AVX-512 is made once per process from the environment: ctest runs this
// suite a second time with ALIGNSCOPE_NO_AVX512=1 for the AVX registers.
#include "oracles.hpp"
#include "sanitizers.hpp"

#include "../../engine/src/profile/forward_pair.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/null_model.hpp>
#include <alignscope/profile/residue_code.hpp>

#include <QFile>
#include <QtTest>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace alignscope::profile;

namespace {

const QString kExamples = QStringLiteral("/usr/share/doc/hmmer/examples");

// How the matrices are kept: two rows (the pipeline's parser), every row,
// or every row of M and I with D in two rows (the envelopes' rescoring).
enum class Keep { Parser, Full, FullTwoRowD };
const char* name_of(Keep k) { return k == Keep::Parser ? "parser" : k == Keep::Full ? "full" : "full, D in two rows"; }

// Values no recurrence writes (NaNs with distinct payloads): the matrices
// are filled with them first, so a cell one side leaves unwritten differs.
float poison(std::uint32_t payload) {
    const std::uint32_t bits = 0x7FC00000u | payload;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
void fill_matrix(DpMatrix& dp, int M, int L, float value) {
    const std::size_t cells = static_cast<std::size_t>(L + 1) * static_cast<std::size_t>(striped_segments(M)) * 4;
    dp.mmx.assign(cells, value);
    dp.imx.assign(cells, value);
    dp.dmx.assign(cells, value);
    dp.xmx.assign(static_cast<std::size_t>(L + 1) * DpMatrix::Specials, value);
}

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }
bool same_bits(float a, float b) { return same_bits(&a, &b, 1); }

// The first difference between the one-target matrix `one` and the grouped
// one: rows rows_mi of M and I, rows_d of D (as each matrix lays them out),
// the specials of rows 0..specials_to. Empty when they agree.
std::string difference(const DpMatrix& one, const DpMatrix& grouped, const std::vector<int>& rows_mi,
                       const std::vector<int>& rows_d, int specials_to) {
    if (one.M != grouped.M || one.L != grouped.L || one.Q != grouped.Q || one.full != grouped.full)
        return "matrix shape";
    if (!same_bits(one.total_scale, grouped.total_scale)) return "total scale";
    const std::size_t w = one.width();
    for (int i : rows_mi) {
        if (!same_bits(one.mmx.data() + one.row(i), grouped.mmx.data() + grouped.row(i), w))
            return "M of row " + std::to_string(i);
        if (!same_bits(one.imx.data() + one.row(i), grouped.imx.data() + grouped.row(i), w))
            return "I of row " + std::to_string(i);
    }
    for (int i : rows_d)
        if (!same_bits(one.dmx.data() + one.drow(i), grouped.dmx.data() + grouped.drow(i), w))
            return "D of row " + std::to_string(i);
    for (int i = 0; i <= specials_to; ++i)
        if (!same_bits(&one.xmx[static_cast<std::size_t>(i * DpMatrix::Specials)],
                       &grouped.xmx[static_cast<std::size_t>(i * DpMatrix::Specials)], DpMatrix::Specials))
            return "specials of row " + std::to_string(i);
    return {};
}

std::vector<int> rows_upto(int L) {
    std::vector<int> r(static_cast<std::size_t>(L + 1));
    for (int i = 0; i <= L; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
}

// What both passes leave in a matrix. Forward: every row of a full matrix,
// the last row of a parser one; of D, row L (and row 0, cleared, where every
// row's D is kept). Backward (nothing but its score for an empty target):
// rows 0..L of a full matrix, row 1 of a parser one; of D, rows 0 and 1 of
// a full matrix (and row L, the first one computed, where every row's D is
// kept), row 1 of a parser one. (A grouped row before the last one of its
// stage writes no D back to the matrix, nor, in a parser matrix, M and I.)
std::string forward_difference(const DpMatrix& one, const DpMatrix& grouped, Keep keep) {
    const int L = one.L;
    std::vector<int> d{L};
    if (keep == Keep::Full) d.push_back(0);
    return difference(one, grouped, keep == Keep::Parser ? std::vector<int>{L} : rows_upto(L), d, L);
}
std::string backward_difference(const DpMatrix& one, const DpMatrix& grouped, Keep keep) {
    const int L = one.L;
    if (L == 0) return difference(one, grouped, {}, {}, -1);
    if (keep == Keep::Parser) return difference(one, grouped, {1}, {1}, L);
    std::vector<int> d{0, 1};
    if (keep == Keep::Full) d.push_back(L);
    return difference(one, grouped, rows_upto(L), d, L);
}

// Targets from a fixed seed (mt19937's output is the same everywhere; the
// standard distributions are not, hence plain modulo).
class Targets {
public:
    Targets(const ProfileHmm& hmm, std::uint32_t seed) : rng_(seed), code_(ResidueCode::of(hmm.alphabet)) {
        for (std::size_t k = 1; k < hmm.consensus.size(); ++k) {
            const int c = code_.code_of(hmm.consensus[k]);
            consensus_.push_back(c >= 0 && c < code_.canonical() ? c : -1);
        }
    }
    int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint32_t>(n)); }
    // L residues: a per-target share of the consensus from a random node
    // on, at a random place, among random residues (now and then a
    // degenerate code). Repeated, multihit targets longer than the model
    // hold several domains; unihit ones hold one (a unihit Backward of
    // several near-consensus domains overflows the Forward's scale).
    std::vector<std::uint8_t> residues(int L, bool repeats) {
        const int identity = std::array<int, 4>{0, 50, 85, 100}[static_cast<std::size_t>(below(4))];
        const int M = static_cast<int>(consensus_.size());
        const int node = below(M), at = L > 0 ? below(L) : 0;
        std::vector<std::uint8_t> dsq(static_cast<std::size_t>(L));
        for (int i = 0; i < L; ++i) {
            const int k = node + i - at;
            const bool in_domain = repeats || (k >= 0 && k < M);
            int x = in_domain && below(100) < identity ? consensus_[static_cast<std::size_t>(((k % M) + M) % M)] : -1;
            if (x < 0) x = below(code_.canonical());
            if (below(40) == 0) x = code_.canonical() + 1 + below(code_.all_codes() - code_.canonical() - 3);
            dsq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(x);
        }
        return dsq;
    }

private:
    std::mt19937 rng_;
    const ResidueCode& code_;
    std::vector<int> consensus_;
};

// The longest random target: shorter under a sanitizer (ASan's -O1 build
// runs these rows about fifteen times slower), every path still taken.
constexpr int kLongest = alignscope::test::kSanitized ? 120 : 400;

// The groups of target lengths one model is run with: one to eight targets
// of 1..kLongest residues; eight of one to three; five of one length (every
// target ends in the same stage); the empty and one-residue targets beside
// the longest, longer than the model.
std::vector<std::vector<int>> group_lengths(Targets& targets, int M) {
    std::vector<std::vector<int>> groups;
    for (int n = 1; n <= kGroupTargets; ++n) {
        std::vector<int> g;
        for (int j = 0; j < n; ++j) g.push_back(1 + targets.below(kLongest));
        groups.push_back(g);
    }
    std::vector<int> tiny;
    for (int j = 0; j < kGroupTargets; ++j) tiny.push_back(1 + targets.below(3));
    groups.push_back(tiny);
    groups.push_back(std::vector<int>(5, 1 + targets.below(kLongest)));
    const int longest = std::max(kLongest, 2 * M + 17);
    groups.push_back({0, 1, longest, 1, 0, 2 + targets.below(M + 1), 3});
    groups.push_back({longest, longest - 1, 1 + targets.below(longest)});
    return groups;
}

// One group, grouped and one target at a time: the first difference, as
// "target J (L n): what", or empty. `rescaled` counts the targets whose
// Forward rows were rescaled.
std::string group_difference(const ForwardProfile& om, bool multihit, Keep keep, Targets& targets,
                             const std::vector<int>& lengths, int& rescaled) {
    const int n = static_cast<int>(lengths.size());
    const bool full = keep != Keep::Parser, all_deletes = keep != Keep::FullTwoRowD;
    std::vector<std::vector<std::uint8_t>> seqs;
    std::vector<DpMatrix> gf(lengths.size()), gb(lengths.size()), sf(lengths.size()), sb(lengths.size());
    std::vector<PairTarget> group;
    for (std::size_t j = 0; j < lengths.size(); ++j) {
        const int L = lengths[j];
        seqs.push_back(targets.residues(L, multihit));
        fill_matrix(gf[j], om.length, L, poison(1));
        fill_matrix(gb[j], om.length, L, poison(2));
        fill_matrix(sf[j], om.length, L, poison(3));
        fill_matrix(sb[j], om.length, L, poison(4));
    }
    for (std::size_t j = 0; j < lengths.size(); ++j)
        group.push_back(
            PairTarget{seqs[j].data(), lengths[j], LengthModel::for_target(lengths[j], multihit), &gf[j], &gb[j]});
    std::vector<float> fs(lengths.size()), bs(lengths.size());
    forward_group(om, group.data(), n, full, fs.data(), all_deletes);
    backward_group(om, group.data(), n, full, bs.data(), all_deletes);
    for (std::size_t j = 0; j < lengths.size(); ++j) {
        const PairTarget& t = group[j];
        const float f1 = forward(om, t.length, t.dsq, t.L, sf[j], full, all_deletes);
        const float b1 = backward(om, t.length, t.dsq, t.L, sf[j], sb[j], full, all_deletes);
        rescaled += sf[j].total_scale > 0 ? 1 : 0;
        std::string what;
        if (!same_bits(f1, fs[j])) what = "Forward score " + std::to_string(f1) + " grouped " + std::to_string(fs[j]);
        else if (!same_bits(b1, bs[j]))
            what = "Backward score " + std::to_string(b1) + " grouped " + std::to_string(bs[j]);
        else if (std::string d = forward_difference(sf[j], gf[j], keep); !d.empty())
            what = "Forward " + d;
        else if (std::string e = backward_difference(sb[j], gb[j], keep); !e.empty())
            what = "Backward " + e;
        if (!what.empty()) return "target " + std::to_string(j) + " (L " + std::to_string(t.L) + "): " + what;
    }
    return {};
}

// The same, naming the hit mode, the matrices and the group's lengths; an
// error thrown by either side is a difference too.
std::string compare_group(const ForwardProfile& om, bool multihit, Keep keep, Targets& targets,
                          const std::vector<int>& lengths, int& rescaled) {
    std::string where = std::string(multihit ? "multihit" : "unihit") + ", " + name_of(keep) + ", lengths ";
    for (std::size_t j = 0; j < lengths.size(); ++j) where += (j ? "," : "") + std::to_string(lengths[j]);
    try {
        const std::string diff = group_difference(om, multihit, keep, targets, lengths, rescaled);
        return diff.empty() ? diff : where + ": " + diff;
    } catch (const alignscope::Error& e) {
        return where + ": " + e.what();
    }
}

QString model_path(const QString& file) {
    return kExamples + (file == QLatin1String("M1") ? "/testsuite/" : "/tutorial/") + file + ".hmm";
}

}  // namespace

class TestForwardGroup : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(model_path(QStringLiteral("Pkinase"))),
                                  "hmmer-examples' models are missing (Debian package hmmer-examples)");
        qInfo("grouped rows: %s, %s", paired_rows_available() ? "on" : "off (no AVX: one target at a time)",
              qEnvironmentVariableIsSet("ALIGNSCOPE_NO_AVX512") ? "AVX-512 off (ALIGNSCOPE_NO_AVX512)"
                                                                : "AVX-512 where the CPU has it");
    }

    void same_as_one_target_at_a_time_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("rescales");  // whether some targets' rows are rescaled
        // Amino models of 149, 86 and 255 nodes (D->D passes that stop early
        // from 100 nodes on), a DNA one, and a model of one node.
        for (const char* f : {"globins4", "fn3", "Pkinase", "MADE1"}) QTest::newRow(f) << QString(f) << true;
        QTest::newRow("M1") << QStringLiteral("M1") << false;
    }
    void same_as_one_target_at_a_time() {
        QFETCH(QString, file);
        QFETCH(bool, rescales);
        const FlushSubnormals flush;
        int compared = 0, rescaled = 0;
        for (const ProfileHmm& hmm : read_hmm_file(model_path(file).toStdString())) {
            NullModel null_model(hmm.alphabet);
            null_model.set_filter(hmm.length, hmm.composition);
            const ConfiguredProfile profile(hmm, null_model);
            Targets targets(hmm, 20261126u + static_cast<std::uint32_t>(hmm.length));
            for (bool multihit : {true, false})
                for (Keep keep : {Keep::Parser, Keep::Full, Keep::FullTwoRowD})
                    for (const std::vector<int>& lengths : group_lengths(targets, hmm.length)) {
                        const std::string diff = compare_group(multihit ? profile.multihit : profile.unihit, multihit,
                                                               keep, targets, lengths, rescaled);
                        QVERIFY2(diff.empty(), (hmm.name + ": " + diff).c_str());
                        compared += static_cast<int>(lengths.size());
                    }
        }
        // (Scale factors that differ from target to target in a group.)
        QVERIFY(compared > 0);
        if (rescales) QVERIFY(rescaled > 0 && rescaled < compared);
    }

    // An envelope rescored alone (a group of one) keeps D in two rows too.
    void one_target_keeps_two_rows_of_d() {
        const ProfileHmm hmm = read_hmm_file(model_path(QStringLiteral("globins4")).toStdString()).front();
        NullModel null_model(hmm.alphabet);
        null_model.set_filter(hmm.length, hmm.composition);
        const ConfiguredProfile profile(hmm, null_model);
        const FlushSubnormals flush;
        Targets targets(hmm, 7);
        const std::vector<std::uint8_t> dsq = targets.residues(300, false);
        DpMatrix fwd, bck;
        PairTarget t{dsq.data(), 300, LengthModel::for_target(300, false), &fwd, &bck};
        float f = 0, b = 0;
        forward_group(profile.unihit, &t, 1, true, &f, false);
        backward_group(profile.unihit, &t, 1, true, &b, false);
        QVERIFY(!fwd.all_deletes);
        QCOMPARE(fwd.dmx.size(), 2 * fwd.width());
        QVERIFY(!bck.all_deletes);
        QCOMPARE(bck.dmx.size(), 2 * bck.width());
    }
};

QTEST_APPLESS_MAIN(TestForwardGroup)
#include "test_forward_group.moc"
