// Alignment files: the multiple-alignment layouts (aligned FASTA, Clustal,
// Stockholm) written here from the aligned rows, the others by the engine.
#include "views/alignment_export.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRadioButton>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <ostream>

namespace alignscope::ui {

QString display_name(AlignmentFileFormat format) {
    switch (format) {
        case AlignmentFileFormat::Pair: return QObject::tr("EMBOSS pair (text)");
        case AlignmentFileFormat::Fasta: return QObject::tr("FASTA, aligned (gaps as -)");
        case AlignmentFileFormat::Clustal: return QObject::tr("Clustal");
        case AlignmentFileFormat::Stockholm: return QObject::tr("Stockholm");
        case AlignmentFileFormat::Sam: return QObject::tr("SAM");
        case AlignmentFileFormat::Tsv: return QObject::tr("TSV (one line per alignment)");
        case AlignmentFileFormat::Json: return QObject::tr("JSON Lines");
    }
    return {};
}

QString file_suffix(AlignmentFileFormat format) {
    switch (format) {
        case AlignmentFileFormat::Pair: return "txt";
        case AlignmentFileFormat::Fasta: return "fasta";
        case AlignmentFileFormat::Clustal: return "aln";
        case AlignmentFileFormat::Stockholm: return "sto";
        case AlignmentFileFormat::Sam: return "sam";
        case AlignmentFileFormat::Tsv: return "tsv";
        case AlignmentFileFormat::Json: return "jsonl";
    }
    return {};
}

const std::vector<AlignmentFileFormat>& alignment_file_formats() {
    static const std::vector<AlignmentFileFormat> formats{AlignmentFileFormat::Pair,    AlignmentFileFormat::Fasta,
                                                          AlignmentFileFormat::Clustal, AlignmentFileFormat::Stockholm,
                                                          AlignmentFileFormat::Sam,     AlignmentFileFormat::Tsv,
                                                          AlignmentFileFormat::Json};
    return formats;
}

namespace {

constexpr std::size_t block = 60;

// "HBB_HUMAN/1-146": the id with the aligned range, as Stockholm names rows.
std::string row_name(const std::string& id, std::int64_t begin, std::int64_t end) {
    return id + "/" + std::to_string(begin) + "-" + std::to_string(end);
}

void write_fasta(std::ostream& out, const Alignment& a) {
    auto record = [&out](const std::string& id, std::int64_t begin, std::int64_t end, std::int64_t length,
                         const std::string& row) {
        out << '>' << id << ' ' << begin << '-' << end << '/' << length << '\n';
        for (std::size_t k = 0; k < row.size(); k += block) out << row.substr(k, block) << '\n';
    };
    record(a.query_id, a.query_begin, a.query_end, a.query_length, a.query_aligned);
    record(a.target_id, a.target_begin, a.target_end, a.target_length, a.target_aligned);
}

// Clustal's conservation line for two rows: '*' identical, ':' a positive
// score, ' ' otherwise (gaps included).
std::string conservation(const Alignment& a, const ScoringScheme& scheme) {
    std::string line = markup_line(a.query_aligned, a.target_aligned, scheme);
    for (char& c : line) c = c == '|' ? '*' : c == ':' ? ':' : ' ';
    return line;
}

void write_clustal(std::ostream& out, const Alignment& a, const ScoringScheme& scheme) {
    out << "CLUSTAL W (AlignScope pairwise alignment)\n\n\n";
    const std::string q = row_name(a.query_id, a.query_begin, a.query_end);
    const std::string t = row_name(a.target_id, a.target_begin, a.target_end);
    const std::size_t width = std::max<std::size_t>({q.size(), t.size(), 10}) + 6;
    const std::string marks = conservation(a, scheme);
    for (std::size_t k = 0; k < a.query_aligned.size(); k += block) {
        auto pad = [width](const std::string& s) { return s + std::string(width - s.size(), ' '); };
        out << pad(q) << a.query_aligned.substr(k, block) << '\n';
        out << pad(t) << a.target_aligned.substr(k, block) << '\n';
        out << std::string(width, ' ') << marks.substr(k, block) << "\n\n";
    }
}

void write_stockholm(std::ostream& out, const Alignment& a, const AlignedPair& pair) {
    out << "# STOCKHOLM 1.0\n";
    out << "#=GF ID " << a.query_id << "_vs_" << a.target_id << '\n';
    out << "#=GF DE " << to_string(a.mode) << " alignment, score " << format_score(pair.scheme.to_user(a.score)) << ", "
        << pair.scheme.describe() << '\n';
    const std::string q = row_name(a.query_id, a.query_begin, a.query_end);
    const std::string t = row_name(a.target_id, a.target_begin, a.target_end);
    const std::size_t width = std::max(q.size(), t.size()) + 2;
    auto pad = [width](const std::string& s) { return s + std::string(width - s.size(), ' '); };
    out << pad(q) << a.query_aligned << '\n';
    out << pad(t) << a.target_aligned << '\n';
    out << "//\n";
}

}  // namespace

void write_alignments(const QString& path, AlignmentFileFormat format, const std::vector<AlignedPair>& pairs) {
    if (pairs.empty()) throw Error(path.toStdString() + ": no alignment to export");
    const bool needs_rows = format == AlignmentFileFormat::Fasta || format == AlignmentFileFormat::Clustal ||
                            format == AlignmentFileFormat::Stockholm;
    if (needs_rows)
        for (const AlignedPair& p : pairs)
            if (!p.alignment.has_traceback())
                throw Error(path.toStdString() + ": " + p.alignment.query_id + " against " + p.alignment.target_id +
                            " was computed without traceback: " + display_name(format).toStdString() +
                            " needs the aligned residues (pair, SAM, TSV and JSON take scores and coordinates)");
    AtomicOutput out(path.toStdString());
    std::ostream& stream = out.stream();
    switch (format) {
        case AlignmentFileFormat::Fasta:
            for (const AlignedPair& p : pairs) write_fasta(stream, p.alignment);
            break;
        case AlignmentFileFormat::Clustal:
            for (const AlignedPair& p : pairs) write_clustal(stream, p.alignment, p.scheme);
            break;
        case AlignmentFileFormat::Stockholm:
            for (const AlignedPair& p : pairs) write_stockholm(stream, p.alignment, p);
            break;
        case AlignmentFileFormat::Pair:
        case AlignmentFileFormat::Sam:
        case AlignmentFileFormat::Tsv:
        case AlignmentFileFormat::Json: {
            const OutputFormat engine_format = format == AlignmentFileFormat::Pair  ? OutputFormat::Pair
                                               : format == AlignmentFileFormat::Sam ? OutputFormat::Sam
                                               : format == AlignmentFileFormat::Tsv ? OutputFormat::Tsv
                                                                                    : OutputFormat::Json;
            WriterContext context;
            context.program = "AlignScope";
            context.scheme = pairs.front().scheme;
            for (const AlignedPair& p : pairs) {
                const bool seen = std::any_of(context.references.begin(), context.references.end(),
                                              [&p](const Sequence* s) { return s->id == p.target.id; });
                if (!seen) context.references.push_back(&p.target);
            }
            auto writer = AlignmentWriter::create(engine_format, stream, context);
            writer->begin();
            for (const AlignedPair& p : pairs) writer->write(p.alignment, p.query, p.target);
            writer->end();
            break;
        }
    }
    out.commit();
}

ExportAlignmentsDialog::ExportAlignmentsDialog(qint64 total, std::vector<qint64> selected, qint64 shown,
                                               const QString& suggested_path, QWidget* parent)
    : QDialog(parent), total_(total), selected_(std::move(selected)), shown_(shown) {
    setObjectName("exportAlignmentsDialog");
    setWindowTitle(tr("Export alignments"));
    all_ = new QRadioButton(tr("&All %n alignment(s) of the job", nullptr, int(total)), this);
    all_->setObjectName("scopeAll");
    selected_button_ = new QRadioButton(tr("The %n &selected alignment(s)", nullptr, int(selected_.size())), this);
    selected_button_->setObjectName("scopeSelected");
    selected_button_->setEnabled(!selected_.empty());
    shown_button_ = new QRadioButton(tr("The &shown alignment (number %1)").arg(shown + 1), this);
    shown_button_->setObjectName("scopeShown");
    shown_button_->setEnabled(shown >= 0);
    (selected_.size() > 1 ? selected_button_ : shown >= 0 ? shown_button_ : all_)->setChecked(true);
    format_ = new QComboBox(this);
    format_->setObjectName("alignmentFormat");
    for (AlignmentFileFormat f : alignment_file_formats()) format_->addItem(display_name(f), int(f));
    path_ = new QLineEdit(suggested_path, this);
    path_->setObjectName("alignmentPath");
    auto* browse = new QToolButton(this);
    browse->setText(QStringLiteral("…"));
    all_->setToolTip(tr("Every alignment of the job"));
    selected_button_->setToolTip(tr("The rows selected in the alignment list"));
    shown_button_->setToolTip(tr("The alignment shown below the list"));
    format_->setToolTip(tr("The file format: EMBOSS pair, aligned FASTA, Clustal, Stockholm, SAM, TSV or JSON Lines"));
    path_->setToolTip(tr("The file to write; its extension follows the format"));
    browse->setToolTip(tr("Choose the file"));
    auto* path_row = new QHBoxLayout;
    path_row->addWidget(path_, 1);
    path_row->addWidget(browse);
    error_ = new QLabel(this);
    error_->setObjectName("exportError");
    error_->setWordWrap(true);
    error_->hide();
    // The file's extension follows the format until the user types a name.
    connect(format_, &QComboBox::currentIndexChanged, this, [this] {
        const QFileInfo info(path_->text());
        path_->setText(info.dir().filePath(info.completeBaseName() + "." + file_suffix(format())));
    });
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getSaveFileName(this, tr("Export alignments"), path_->text());
        if (!chosen.isEmpty()) path_->setText(chosen);
    });
    auto* form = new QFormLayout;
    auto* scope = new QVBoxLayout;
    for (QRadioButton* b : {all_, selected_button_, shown_button_}) scope->addWidget(b);
    form->addRow(tr("Which:"), scope);
    form->addRow(tr("&Format:"), format_);
    form->addRow(tr("F&ile:"), path_row);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportAlignmentsDialog::saveRequested);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(error_);
    layout->addWidget(buttons);
}

ExportAlignmentsDialog::Scope ExportAlignmentsDialog::scope() const {
    return all_->isChecked() ? Scope::All : selected_button_->isChecked() ? Scope::Selected : Scope::Shown;
}

AlignmentFileFormat ExportAlignmentsDialog::format() const {
    return AlignmentFileFormat(format_->currentData().toInt());
}

QString ExportAlignmentsDialog::path() const { return path_->text(); }

std::vector<qint64> ExportAlignmentsDialog::rows() const {
    switch (scope()) {
        case Scope::All: {
            std::vector<qint64> rows;
            for (qint64 k = 0; k < total_; ++k) rows.push_back(k);
            return rows;
        }
        case Scope::Selected: return selected_;
        case Scope::Shown: return {shown_};
    }
    return {};
}

void ExportAlignmentsDialog::setError(const QString& text) {
    error_->setText(QStringLiteral("<span style=\"color:#b02020\">%1</span>").arg(text.toHtmlEscaped()));
    error_->show();
}

}  // namespace alignscope::ui
