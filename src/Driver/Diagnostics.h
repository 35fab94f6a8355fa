//===- Diagnostics.h - One route for every pallasc diagnostic --*- C++ -*-===//
//
// MLIR diagnostics (file:line:col with the source line), grid spec errors
// (JSON path, or line:col for syntax errors) and driver messages all go to
// stderr through one spdlog logger.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_DIAGNOSTICS_H
#define PALLASC_SRC_DRIVER_DIAGNOSTICS_H

#include "src/Driver/Driver.h"
#include "src/Spec/GridSpec.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace pallasc {

/// Logs an error line (already formatted "file:line:col: error: ...").
void logError(const std::string &message);

/// How many warnings (and errors) the logger has received from this thread.
uint64_t warningsLogged();

/// Prints grid spec errors as `spec.json:L:C: error: msg` (syntax errors) or
/// `spec.json: error: path: msg`.
void reportSpecErrors(const std::string &specPath,
                      const std::vector<spec::SpecError> &errors);

/// Widest source line a diagnostic shows; longer ones are cut around the
/// caret.
constexpr size_t kSnippetWidth = 160;
/// Longest other line (a message) a diagnostic shows.
constexpr size_t kMaxMessageLine = 4096;

/// Cuts the long lines of a rendered diagnostic: a source line longer than
/// `width` followed by its caret line (`   ^~~`) to the `width` columns
/// around the caret, any other line longer than kMaxMessageLine to its first
/// and last kMaxMessageLine / 2 characters; "..." marks each cut. pallasc
/// writes every error line through it (logError, CLI errors, diagnostics).
std::string clipLongLines(llvm::StringRef text, size_t width);

/// While alive, routes the context's diagnostics to the logger, rendered by
/// MLIR's SourceMgrDiagnosticHandler (location, severity, source line).
class DiagnosticRouter {
  /// MLIR's renderer, with its per-diagnostic entry point made public.
  struct Renderer : mlir::SourceMgrDiagnosticHandler {
    using mlir::SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
    using mlir::SourceMgrDiagnosticHandler::emitDiagnostic;
  };

public:
  explicit DiagnosticRouter(mlir::MLIRContext *context);
  ~DiagnosticRouter();
  llvm::SourceMgr &sourceMgr() { return mgr; }
  /// Diagnostics located in `file` (e.g. the JSON spec, whose ops carry a
  /// location at 1:1) are printed as `file: error: message`, without a
  /// misleading source line. So are diagnostics located at line 0 of any
  /// file (the kernel module itself).
  void addFileWithoutSnippets(std::string file) {
    noSnippetFiles.push_back(std::move(file));
  }

private:
  llvm::SourceMgr mgr;
  std::string buffer;
  std::unique_ptr<llvm::raw_string_ostream> stream;
  std::unique_ptr<Renderer> renderer;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> forwarder;
  std::vector<std::string> noSnippetFiles;
};

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_DIAGNOSTICS_H
