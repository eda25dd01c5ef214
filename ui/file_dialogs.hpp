// File dialogs that start in the folder last used for the same kind of file
// (sequences, projects, matrices, traces, images, alignments, hit tables),
// kept in QSettings as folders/<kind>. They open window-modal and call back,
// never blocking the caller (so the tests drive the real dialog). Also the
// check of text typed or pasted into a field that names a file.
#pragma once

#include <QFileDialog>
#include <QString>
#include <QStringList>

#include <functional>

namespace alignscope::ui {

enum class FileKind { Sequences, Projects, Matrices, Traces, Images, Alignments, Hits };

// "sequences", "projects", ...: the QSettings key is "folders/" + this.
QString file_kind_name(FileKind kind);
// The folder last used for this kind; the home folder before the first use.
QString remembered_folder(FileKind kind);
// Keeps the folder of `path` (a file, or a folder itself) for this kind.
void remember_folder(FileKind kind, const QString& path);

// Why `text`, typed or pasted into a field that names a file (or a built-in
// name), cannot be a file path: empty when it can. Pasted sequences or binary
// data are refused here, before they reach the file system or an error
// message whole. The problem reads after "the text ": "holds control ...".
QString path_text_problem(const QString& text);

// Opens a dialog in the kind's remembered folder (`name`, if given, is
// suggested there). On acceptance the folder is remembered and `chosen` gets
// the paths (one for Save and AnyFile modes). The dialog deletes itself when
// closed; it is returned opened.
QFileDialog* open_file_dialog(QWidget* parent, FileKind kind, const QString& title, const QString& filters,
                              QFileDialog::AcceptMode accept, QFileDialog::FileMode mode,
                              std::function<void(const QStringList&)> chosen, const QString& name = {});

}  // namespace alignscope::ui
