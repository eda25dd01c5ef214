// Remembered folders per kind of file, and the dialogs that use them.
#include "file_dialogs.hpp"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QSettings>

namespace alignscope::ui {

QString file_kind_name(FileKind kind) {
    switch (kind) {
        case FileKind::Sequences: return QStringLiteral("sequences");
        case FileKind::Projects: return QStringLiteral("projects");
        case FileKind::Matrices: return QStringLiteral("matrices");
        case FileKind::Traces: return QStringLiteral("traces");
        case FileKind::Images: return QStringLiteral("images");
        case FileKind::Alignments: return QStringLiteral("alignments");
        case FileKind::Hits: return QStringLiteral("hits");
    }
    return QStringLiteral("other");
}

QString remembered_folder(FileKind kind) {
    const QString folder = QSettings().value("folders/" + file_kind_name(kind)).toString();
    return !folder.isEmpty() && QFileInfo(folder).isDir() ? folder : QDir::homePath();
}

void remember_folder(FileKind kind, const QString& path) {
    if (path.isEmpty()) return;
    const QFileInfo info(path);
    QSettings().setValue("folders/" + file_kind_name(kind),
                         info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

QString path_text_problem(const QString& text) {
    // Linux allows 4,096 bytes in a path; pasted data runs far past it.
    constexpr qsizetype longest_path = 4096;
    if (text.size() > longest_path)
        return QObject::tr("is %L1 characters long, not a file path (pasted data?)").arg(text.size());
    for (const QChar c : text)
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return QObject::tr("holds line breaks, tabs or other control characters, not a file path (pasted data?)");
    return {};
}

QFileDialog* open_file_dialog(QWidget* parent, FileKind kind, const QString& title, const QString& filters,
                              QFileDialog::AcceptMode accept, QFileDialog::FileMode mode,
                              std::function<void(const QStringList&)> chosen, const QString& name) {
    auto* dialog = new QFileDialog(parent, title, remembered_folder(kind), filters);
    dialog->setObjectName(file_kind_name(kind) + "Dialog");
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(accept);
    dialog->setFileMode(mode);
    dialog->setWindowModality(Qt::WindowModal);
    if (!name.isEmpty()) dialog->selectFile(QDir(remembered_folder(kind)).filePath(name));
    QObject::connect(dialog, &QFileDialog::accepted, dialog, [dialog, kind, chosen = std::move(chosen)] {
        const QStringList paths = dialog->selectedFiles();
        if (paths.isEmpty()) return;
        remember_folder(kind, paths.first());
        if (chosen) chosen(paths);
    });
    dialog->open();
    return dialog;
}

}  // namespace alignscope::ui
