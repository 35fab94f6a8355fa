# Third-party libraries, all from Debian packages (see scripts/setup.sh).
find_package(nlohmann_json 3 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
# --cache-dir http://...: the compile cache on an HTTP server.
find_package(CURL REQUIRED)
if(PALLASC_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()

# Libraries that throw (CLI11, nlohmann::json parse paths) are confined to
# targets compiled with exceptions; call this on such a target.
function(pallasc_enable_exceptions target)
  target_compile_options(${target} PRIVATE -fexceptions)
endfunction()

# pallasc_add_library(name SOURCES... [DEPENDS targets...] [MLIR_LIBS libs...]
#                     [LIBS other...])
# A static library of ours. MLIR libraries go through
# mlir_target_link_libraries so that MLIR_LINK_MLIR_DYLIB=ON links libMLIR.so
# instead of ~430 static archives.
function(pallasc_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;MLIR_LIBS;LIBS" ${ARGN})
  add_mlir_library(${name} ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL PARTIAL_SOURCES_INTENDED
    DEPENDS ${ARG_DEPENDS})
  if(ARG_MLIR_LIBS)
    mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  endif()
  if(ARG_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LIBS})
  endif()
  pallasc_static_llvm_library(${name} ${ARG_MLIR_LIBS})
endfunction()

# pallasc_dialect_tablegen(PREFIX DIALECT [ENUMS])
# The TableGen outputs of a dialect's ops file PREFIX.td (dialect name
# DIALECT): PREFIX{,Dialect,Attrs,Types}.{h,cpp}.inc, and with ENUMS
# PREFIXEnums.{h,cpp}.inc. A macro, so that TABLEGEN_OUTPUT reaches the
# caller's add_public_tablegen_target.
macro(pallasc_dialect_tablegen prefix dialect)
  cmake_parse_arguments(_PDT "ENUMS" "" "" ${ARGN})
  set(LLVM_TARGET_DEFINITIONS ${prefix}.td)
  mlir_tablegen(${prefix}.h.inc -gen-op-decls)
  mlir_tablegen(${prefix}.cpp.inc -gen-op-defs)
  mlir_tablegen(${prefix}Dialect.h.inc -gen-dialect-decls -dialect=${dialect})
  mlir_tablegen(${prefix}Dialect.cpp.inc -gen-dialect-defs -dialect=${dialect})
  if(_PDT_ENUMS)
    mlir_tablegen(${prefix}Enums.h.inc -gen-enum-decls)
    mlir_tablegen(${prefix}Enums.cpp.inc -gen-enum-defs)
  endif()
  mlir_tablegen(${prefix}Attrs.h.inc -gen-attrdef-decls
    -attrdefs-dialect=${dialect})
  mlir_tablegen(${prefix}Attrs.cpp.inc -gen-attrdef-defs
    -attrdefs-dialect=${dialect})
  mlir_tablegen(${prefix}Types.h.inc -gen-typedef-decls
    -typedefs-dialect=${dialect})
  mlir_tablegen(${prefix}Types.cpp.inc -gen-typedef-defs
    -typedefs-dialect=${dialect})
endmacro()
