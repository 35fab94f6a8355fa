# pallasc_add_lit_tests(): a directory of kernel regression tests (lit
# tests: RUN lines calling %pallasc, %FileCheck, ...) as a ctest test and a
# check-<name> target (docs/testing.md).
#
#   pallasc_add_lit_tests(
#     DIRECTORY tests/kernels       # the tests (.test, .mlir; Inputs/ is data)
#     [NAME kernels]                # the ctest name; default: the directory's name
#     [PARAMS key=value ...]        # lit --param values (lit_config.params)
#     [LIT_ARGS -v ...]             # more lit arguments (default: -sv)
#     [DEPENDS target ...])         # targets check-<name> builds first
#
# Writes <binary dir>/pallasc-lit/<name>/lit.site.cfg.py, which names the
# tools found now (pallasc and pallasc-opt from this package; lit,
# FileCheck and not from LLVM 22: the cache variables PALLASC_LIT_EXECUTABLE,
# PALLASC_FILECHECK_EXECUTABLE, PALLASC_NOT_EXECUTABLE; python3 on PATH for
# %python, PALLASC_PYTHON_EXECUTABLE) and loads the
# installed lit configuration, PREFIX/share/pallasc/lit/lit.cfg.py (its
# substitutions: %pallasc, %pallasc-opt, %FileCheck, %not, %python; its
# features: ptxas, ld.lld, jax). Test outputs (%t) go below that directory,
# never into the source tree.

function(_pallasc_find_lit_tools)
  # Where pallasc's LLVM keeps its tools.
  set(_pallasc_llvm_hints "${PALLASC_LLVM_TOOLS_DIR}" /usr/lib/llvm-22/bin)
  find_program(PALLASC_LIT_EXECUTABLE NAMES lit llvm-lit lit-22
               HINTS ${_pallasc_llvm_hints}
               DOC "lit, to run pallasc_add_lit_tests() suites")
  find_program(PALLASC_FILECHECK_EXECUTABLE NAMES FileCheck FileCheck-22
               HINTS ${_pallasc_llvm_hints}
               DOC "FileCheck, for %FileCheck in pallasc_add_lit_tests() suites")
  find_program(PALLASC_NOT_EXECUTABLE NAMES not not-22
               HINTS ${_pallasc_llvm_hints}
               DOC "LLVM's not, for %not in pallasc_add_lit_tests() suites")
  # %python (and the jax feature); the one running lit when not found.
  find_program(PALLASC_PYTHON_EXECUTABLE NAMES python3 python
               DOC "Python for %python in pallasc_add_lit_tests() suites")
  if(NOT PALLASC_PYTHON_EXECUTABLE)
    set(PALLASC_PYTHON_EXECUTABLE "" CACHE FILEPATH "" FORCE)
  endif()
  foreach(tool LIT FILECHECK NOT)
    if(NOT PALLASC_${tool}_EXECUTABLE)
      message(FATAL_ERROR
        "pallasc_add_lit_tests: cannot find LLVM's ${tool} tool (lit, "
        "FileCheck and not come with LLVM 22: apt-get install llvm-22-tools, "
        "or set -DPALLASC_${tool}_EXECUTABLE=PATH)")
    endif()
  endforeach()
endfunction()

function(pallasc_add_lit_tests)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DIRECTORY;NAME"
                        "PARAMS;LIT_ARGS;DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "pallasc_add_lit_tests: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_DIRECTORY)
    message(FATAL_ERROR "pallasc_add_lit_tests: DIRECTORY is required")
  endif()
  get_filename_component(source "${ARG_DIRECTORY}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT IS_DIRECTORY "${source}")
    message(FATAL_ERROR
      "pallasc_add_lit_tests: DIRECTORY ${source} is not a directory")
  endif()
  if(NOT ARG_NAME)
    get_filename_component(ARG_NAME "${source}" NAME)
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z0-9_.+-]+$")
    message(FATAL_ERROR
      "pallasc_add_lit_tests: NAME must be a plain name (letters, digits, "
      "_ . + -), got '${ARG_NAME}'")
  endif()
  if(NOT DEFINED ARG_LIT_ARGS)
    set(ARG_LIT_ARGS -sv)
  endif()
  _pallasc_find_lit_tools()

  set(binary "${CMAKE_CURRENT_BINARY_DIR}/pallasc-lit/${ARG_NAME}")
  set(_pallasc_lit_name "${ARG_NAME}")
  set(_pallasc_lit_source "${source}")
  set(_pallasc_lit_binary "${binary}")
  configure_file("${PALLASC_LIT_DIR}/lit.site.cfg.py.in"
                 "${binary}/lit.site.cfg.py" @ONLY)
  set(params)
  foreach(p IN LISTS ARG_PARAMS)
    list(APPEND params "--param" "${p}")
  endforeach()
  set(command "${PALLASC_LIT_EXECUTABLE}" ${ARG_LIT_ARGS} ${params} "${binary}")
  add_test(NAME ${ARG_NAME} COMMAND ${command})
  add_custom_target(check-${ARG_NAME}
    COMMAND ${command}
    DEPENDS ${ARG_DEPENDS}
    COMMENT "Running the ${ARG_NAME} kernel tests"
    USES_TERMINAL
    VERBATIM)
endfunction()
