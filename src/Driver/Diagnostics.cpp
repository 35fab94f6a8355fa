//===- Diagnostics.cpp - One route for every pallasc diagnostic -*- C++ -*-===//

#include "src/Driver/Diagnostics.h"

#include "src/Driver/Console.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

namespace pallasc {

namespace {

thread_local uint64_t warningCount = 0;

/// The logger's sink: the console (src/Driver/Console.h), or this thread's
/// LogCapture. -v lines (debug and below) are printed as they happen even
/// under a capture: they say what a job is doing now.
class ConsoleSink : public spdlog::sinks::base_sink<std::mutex> {
public:
  /// -q: warnings reach the sink (to be counted) but are not printed.
  std::atomic<bool> quiet{false};

protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    llvm::StringRef line(formatted.data(), formatted.size());
    if (msg.level >= spdlog::level::warn)
      ++warningCount;
    if (quiet && msg.level < spdlog::level::err)
      return;
    if (console::capturing() && msg.level > spdlog::level::debug)
      console::appendToCapture(line);
    else
      console::write(line);
  }
  void flush_() override {}
};

} // namespace

void setupLogging(Verbosity verbosity) {
  static std::shared_ptr<ConsoleSink> sink = std::make_shared<ConsoleSink>();
  auto logger = spdlog::get("pallasc");
  if (!logger) {
    logger = std::make_shared<spdlog::logger>("pallasc", sink);
    spdlog::register_logger(logger);
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
  }
  sink->quiet = verbosity == Verbosity::Quiet;
  switch (verbosity) {
  case Verbosity::Quiet:
    // Warnings are counted (a compile that warned is not cached), not shown.
    logger->set_level(spdlog::level::warn);
    break;
  case Verbosity::Normal:
    logger->set_level(spdlog::level::warn);
    break;
  case Verbosity::Verbose:
    logger->set_level(spdlog::level::debug);
    break;
  }
  logger->flush_on(spdlog::level::trace);
}

void logError(const std::string &message) {
  // A message can quote its input (a key, a path, a value): whatever it
  // holds, no line of it reaches stderr longer than kMaxMessageLine.
  spdlog::error("{}", clipLongLines(message, kSnippetWidth));
}

uint64_t warningsLogged() { return warningCount; }

void reportSpecErrors(const std::string &specPath,
                      const std::vector<spec::SpecError> &errors) {
  for (const spec::SpecError &e : errors) {
    std::string where = specPath;
    if (e.line > 0)
      where += ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
    std::string what = e.path.empty() ? e.message : e.path + ": " + e.message;
    logError(where + ": error: " + what);
  }
  if (errors.empty())
    logError(specPath + ": error: invalid grid spec");
}

std::string clipLongLines(llvm::StringRef text, size_t width) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  auto isCaretLine = [](llvm::StringRef l) {
    return l.contains('^') && l.find_first_not_of(" \t^~") == llvm::StringRef::npos;
  };
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i];
    if (i)
      out += '\n';
    if (line.size() <= width ||
        (line.size() <= kMaxMessageLine &&
         !(i + 1 < lines.size() && isCaretLine(lines[i + 1])))) {
      out += line.str();
      continue;
    }
    // A source line and its caret line: a window of `width` columns around
    // the caret, "..." where it cuts the line.
    if (i + 1 < lines.size() && isCaretLine(lines[i + 1])) {
      llvm::StringRef caret = lines[i + 1];
      size_t at = caret.find('^');
      size_t start = at > width / 2 ? at - width / 2 : 0;
      if (start + width > line.size())
        start = line.size() > width ? line.size() - width : 0;
      std::string head = start ? "..." : "";
      std::string tail = start + width < line.size() ? "..." : "";
      out += head + line.substr(start, width).str() + tail + '\n';
      std::string marks = caret.size() > start ? caret.substr(start, width).str()
                                               : std::string();
      out += std::string(head.size(), ' ') + marks;
      ++i;
      continue;
    }
    // A message: its head and its tail (where the reason usually is).
    out += line.substr(0, kMaxMessageLine / 2).str() + "..." +
           line.substr(line.size() - kMaxMessageLine / 2).str();
  }
  return out;
}

DiagnosticRouter::DiagnosticRouter(mlir::MLIRContext *context)
    : stream(std::make_unique<llvm::raw_string_ostream>(buffer)) {
  renderer = std::make_unique<Renderer>(mgr, context, *stream);
  forwarder = std::make_unique<mlir::ScopedDiagnosticHandler>(
      context, [this](mlir::Diagnostic &diag) {
        auto fileLoc = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation());
        // The spec's ops, and ops located at line 0 (the module parsed from
        // the kernel file is at file:0:0), have no source line to show.
        if (fileLoc && (fileLoc.getLine() == 0 ||
                        llvm::is_contained(noSnippetFiles,
                                           fileLoc.getFilename().str()))) {
          *stream << fileLoc.getFilename().getValue() << ": "
                  << (diag.getSeverity() == mlir::DiagnosticSeverity::Error
                          ? "error"
                          : diag.getSeverity() ==
                                    mlir::DiagnosticSeverity::Warning
                                ? "warning"
                                : "note")
                  << ": " << diag.str() << "\n";
          for (mlir::Diagnostic &note : diag.getNotes())
            renderer->emitDiagnostic(note.getLocation(), note.str(),
                                     note.getSeverity());
        } else {
          renderer->emitDiagnostic(diag);
        }
        stream->flush();
        // A source line can be megabytes long: show the part around the
        // caret.
        std::string clipped =
            clipLongLines(llvm::StringRef(buffer).rtrim('\n'), kSnippetWidth);
        llvm::StringRef text = clipped;
        switch (diag.getSeverity()) {
        case mlir::DiagnosticSeverity::Error:
          spdlog::error("{}", text.str());
          break;
        case mlir::DiagnosticSeverity::Warning:
          spdlog::warn("{}", text.str());
          break;
        default:
          spdlog::info("{}", text.str());
          break;
        }
        buffer.clear();
        return mlir::success();
      });
}

DiagnosticRouter::~DiagnosticRouter() {
  forwarder.reset();
  renderer.reset();
}

} // namespace pallasc
