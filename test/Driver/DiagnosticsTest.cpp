//===- DiagnosticsTest.cpp - Tests of the pallasc diagnostic route -*- C++ -*-===//
//
// DiagnosticRouter renders MLIR diagnostics through the spdlog logger: kernel
// locations as file:line:col with the source line, the spec's locations and
// line-0 locations (the kernel module itself) as `file: error: message`.
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

using namespace pallasc;

namespace {

/// Sends the default spdlog logger to a string while alive.
struct CapturedLog {
  CapturedLog() : previous(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(text);
    auto logger = std::make_shared<spdlog::logger>("test", sink);
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous); }
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> previous;
};

const char *kKernel = "pallas.kernel @k() {\n  bad.op\n}\n";

} // namespace

TEST_CASE("diagnostics are rendered by location kind", "[driver]") {
  CapturedLog log;
  mlir::MLIRContext context;
  {
    DiagnosticRouter router(&context);
    router.addFileWithoutSnippets("spec.json");
    router.sourceMgr().AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(kKernel, "k.mlir"), llvm::SMLoc());

    SECTION("a kernel location shows file:line:col and the source line") {
      mlir::emitError(mlir::FileLineColLoc::get(&context, "k.mlir", 2, 3),
                      "unknown op");
      CHECK(log.text.str() == "k.mlir:2:3: error: unknown op\n"
                              "  bad.op\n"
                              "  ^\n");
    }
    SECTION("a spec location shows the file only, with notes rendered") {
      mlir::InFlightDiagnostic diag = mlir::emitError(
          mlir::FileLineColLoc::get(&context, "spec.json", 1, 1),
          "'pallas.call' op bad call");
      diag.attachNote(mlir::FileLineColLoc::get(&context, "k.mlir", 1, 15))
          << "kernel declared here";
      diag.report();
      CHECK(log.text.str() == "spec.json: error: 'pallas.call' op bad call\n"
                              "k.mlir:1:15: note: kernel declared here\n"
                              "pallas.kernel @k() {\n"
                              "              ^\n");
    }
    SECTION("line 0 (the module itself) shows the file only") {
      mlir::emitError(mlir::FileLineColLoc::get(&context, "k.mlir", 0, 0),
                      "transform 'pallas-dce' is not available");
      CHECK(log.text.str() ==
            "k.mlir: error: transform 'pallas-dce' is not available\n");
    }
    SECTION("warnings keep their severity") {
      mlir::emitWarning(mlir::FileLineColLoc::get(&context, "spec.json", 1, 1),
                        "something odd");
      CHECK(log.text.str() == "spec.json: warning: something odd\n");
    }
  }
}

TEST_CASE("spec errors: JSON path, or line:col for syntax errors",
          "[driver]") {
  CapturedLog log;
  reportSpecErrors("s.json", {spec::SpecError{"in_specs[0]", "bad", 0, 0},
                              spec::SpecError{"", "invalid JSON", 3, 7},
                              spec::SpecError{"", "top-level problem", 0, 0}});
  CHECK(log.text.str() == "s.json: error: in_specs[0]: bad\n"
                          "s.json:3:7: error: invalid JSON\n"
                          "s.json: error: top-level problem\n");
}

TEST_CASE("clipLongLines keeps the columns around the caret of a long line",
          "[diagnostics]") {
  std::string source(1000, 'a');
  source[700] = 'X';
  std::string caret = std::string(700, ' ') + "^";
  std::string text = "k.mlir:1:701: error: bad\n" + source + "\n" + caret;
  std::string clipped = clipLongLines(text, 40);
  // 20 columns before the caret, 20 from it; "..." on both sides.
  std::string window = "..." + std::string(20, 'a') + "X" +
                       std::string(19, 'a') + "...";
  CHECK(clipped == "k.mlir:1:701: error: bad\n" + window + "\n" +
                       std::string(23, ' ') + "^");
  // Short lines are kept; a message is cut only past kMaxMessageLine.
  CHECK(clipLongLines("short\n  ^", 40) == "short\n  ^");
  CHECK(clipLongLines(std::string(50, 'b'), 40) == std::string(50, 'b'));
  CHECK(clipLongLines(std::string(kMaxMessageLine + 1, 'b'), 40) ==
        std::string(kMaxMessageLine / 2, 'b') + "..." +
            std::string(kMaxMessageLine / 2, 'b'));
  // The head and the tail of a long message are kept.
  std::string message = "head" + std::string(3 * kMaxMessageLine, 'm') + "tail";
  std::string cut = clipLongLines(message, 40);
  CHECK(cut.size() == kMaxMessageLine + 3);
  CHECK(llvm::StringRef(cut).starts_with("head"));
  CHECK(llvm::StringRef(cut).ends_with("tail"));
  // A caret near the start: no leading "...".
  std::string early = "x\n" + source + "\n  ^";
  CHECK(clipLongLines(early, 40) ==
        "x\n" + std::string(40, 'a') + "...\n  ^");
}
