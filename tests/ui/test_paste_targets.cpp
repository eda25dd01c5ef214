// Every place of the workbench that takes pasted text, fed what a clipboard
// can hold: nothing, blank space, 10 MB of residues and binary bytes (NULs and
// control characters included). The targets: File › Paste Sequences… (its
// dialog, as a user opens it), the all-against-all view's matrix field and
// the profile search's FASTA file field. Each answers with one clear message
// (the pasted residues load as one record), and nothing crashes.
#include <analysis/allvsall_view.hpp>
#include <analysis/profile_search_view.hpp>
#include "workbench_fixture.hpp"

#include <QAction>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

enum class Paste { Empty, Blank, Huge, Binary };

// 10 MB of protein residues in lines of 60, without a header (one record when
// pasted); `residues` gets how many letters that is.
QString huge_residues(qsizetype* residues) {
    const QString alphabet = QStringLiteral("ACDEFGHIKLMNPQRSTVWY");
    QString text;
    text.reserve(10'500'000);
    qsizetype letters = 0;
    while (text.size() < 10'000'000) {
        for (int k = 0; k < 60; ++k, ++letters) text += alphabet[int((letters * 7 + letters / 13) % alphabet.size())];
        text += '\n';
    }
    *residues = letters;
    return text;
}

// 64 KiB of bytes from a fixed linear congruential sequence, read as Latin-1:
// every byte value, NUL first.
QString binary_text() {
    QByteArray bytes(65'536, '\0');
    quint32 x = 12345;
    for (qsizetype k = 1; k < bytes.size(); ++k) {
        x = x * 1664525u + 1013904223u;
        bytes[k] = char(x >> 24);
    }
    return QString::fromLatin1(bytes);
}

QString pasted(Paste kind, qsizetype* residues = nullptr) {
    qsizetype ignored = 0;
    switch (kind) {
        case Paste::Empty: return {};
        case Paste::Blank: return QStringLiteral(" \t\r\n  \n\t ");
        case Paste::Huge: return huge_residues(residues ? residues : &ignored);
        case Paste::Binary: return binary_text();
    }
    return {};
}

void add_rows() {
    QTest::addColumn<int>("kind");
    QTest::newRow("empty") << int(Paste::Empty);
    QTest::newRow("blank") << int(Paste::Blank);
    QTest::newRow("10 MB of residues") << int(Paste::Huge);
    QTest::newRow("binary") << int(Paste::Binary);
}

}  // namespace

class PasteTargetsTest : public QObject {
    Q_OBJECT
    Workbench bench_{StandardPaths::Environment};
    QStringList messages_;  // "title: text" of every message the window gave
    std::unique_ptr<MainWindow> window_;

    // Pastes the clipboard into a line edit as Ctrl+V does (replacing its text).
    static void paste_into(QLineEdit& field, const QString& text) {
        QApplication::clipboard()->setText(text);
        field.selectAll();
        field.paste();
    }

private slots:
    void initTestCase() {
        QVERIFY(bench_.valid());
        window_ = bench_.openWindow(bench_.path("paste.alsproj"), true, {1200, 800}, &messages_);
        QVERIFY(window_);
        QVERIFY(load_and_wait(*window_, {human_globins(), other_globins()}));
        QCOMPARE(int(window_->document().inputs().size()), 2);
    }

    void init() { messages_.clear(); }

    void cleanup() {
        if (QMessageBox* box = window_->currentMessageBox()) box->close();
    }

    void sequences_data() { add_rows(); }
    void sequences() {
        QFETCH(int, kind);
        qsizetype residues = 0;
        const QString text = pasted(Paste(kind), &residues);
        QApplication::clipboard()->setText(text);
        const std::size_t inputs_before = window_->document().inputs().size();

        // File › Paste Sequences…, as a user opens it: the dialog holds the clipboard.
        QAction* action = nullptr;
        for (QAction* a : window_->findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V)) action = a;
        QVERIFY(action);
        action->trigger();
        QDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window_->findChild<QDialog*>("pasteDialog")) != nullptr);
        auto* edit = dialog->findChild<QPlainTextEdit*>();
        QVERIFY(edit);
        if (Paste(kind) == Paste::Huge) QCOMPARE(edit->toPlainText().size(), text.size());
        QSignalSpy idle(&window_->document(), &ProjectDocument::loadingIdle);
        auto* buttons = dialog->findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
        QTRY_VERIFY(!window_->findChild<QDialog*>("pasteDialog"));

        switch (Paste(kind)) {
            case Paste::Empty:
            case Paste::Blank:
                // Nothing is loaded, and the message says why.
                QCOMPARE(messages_.size(), 1);
                QVERIFY2(messages_[0].startsWith("Nothing to paste: The pasted text is "), qPrintable(messages_[0]));
                QCOMPARE(window_->document().inputs().size(), inputs_before);
                QVERIFY(!window_->document().loading());
                break;
            case Paste::Huge: {
                // One record of every pasted letter, without a message.
                QTRY_VERIFY_WITH_TIMEOUT(!idle.isEmpty(), 120'000);
                QCOMPARE(window_->document().inputs().size(), inputs_before + 1);
                const SequenceInput& input = window_->document().inputs().back();
                QVERIFY2(input.set, qPrintable(input.error));
                QCOMPARE(input.set->records.size(), std::size_t(1));
                QCOMPARE(qsizetype(input.set->records.front().residues.size()), residues);
                QVERIFY2(messages_.isEmpty(), qPrintable(messages_.join('\n')));
                break;
            }
            case Paste::Binary:
                // Refused when read: one short message naming the file kept for
                // the paste, the line (2: under the header the paste gets) and
                // the byte that is no residue.
                QTRY_VERIFY_WITH_TIMEOUT(!idle.isEmpty(), 60'000);
                QCOMPARE(messages_.size(), 1);
                QVERIFY2(messages_[0].startsWith("Cannot load pasted-"), qPrintable(messages_[0].left(400)));
                QVERIFY2(messages_[0].contains(".fa:2: ") && messages_[0].contains("NUL byte"),
                         qPrintable(messages_[0].left(400)));
                QVERIFY2(messages_[0].size() < 400, qPrintable(messages_[0].left(400)));
                break;
        }
        QVERIFY(window_->isVisible());
    }

    void allAgainstAllMatrix_data() { add_rows(); }
    void allAgainstAllMatrix() {
        QFETCH(int, kind);
        auto* view = qobject_cast<AllVsAllView*>(window_->view("allvsall"));
        QVERIFY(view);
        window_->showView("allvsall");
        auto* field = view->findChild<QLineEdit*>("allvsallMatrix");
        QVERIFY(field);
        paste_into(*field, pasted(Paste(kind)));
        // Refused before anything runs, in one short line about the matrix.
        QVERIFY(!view->run());
        const QString error = view->lastError();
        QVERIFY2(error.startsWith("Matrix: "), qPrintable(error.left(400)));
        QVERIFY2(error.size() < 400, qPrintable(error.left(400)));
        // The field still works: a built-in name runs (stopped at once).
        field->setText(QStringLiteral("BLOSUM62"));
        QSignalSpy finished(view, &AllVsAllView::runFinished);
        QVERIFY2(view->run(), qPrintable(view->lastError()));
        view->cancel();
        QVERIFY(finished.wait(30'000));
    }

    void profileSearchDatabase_data() { add_rows(); }
    void profileSearchDatabase() {
        QFETCH(int, kind);
        auto* view = qobject_cast<ProfileSearchView*>(window_->view("profiles"));
        QVERIFY(view);
        window_->showView("profiles");
        QVERIFY2(view->openProfile(QStringLiteral(ALIGNSCOPE_TEST_DATA "/profile/tiny.hmm")),
                 qPrintable(view->lastError()));
        view->setDatabase(QString());  // Targets: a FASTA file
        auto* field = view->findChild<QLineEdit*>("profileDatabase");
        QVERIFY(field);
        paste_into(*field, pasted(Paste(kind)));
        QVERIFY(!view->runSearch());
        const QString error = view->lastError();
        QVERIFY2(error.startsWith("Targets: "), qPrintable(error.left(400)));
        QVERIFY2(error.size() < 400, qPrintable(error.left(400)));
    }
};

int main(int argc, char** argv) { return run_isolated<PasteTargetsTest>(argc, argv, "alignscope-paste-test"); }

#include "test_paste_targets.moc"
