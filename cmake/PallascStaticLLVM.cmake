# PALLASC_STATIC_LLVM: the `pallasc` executable links LLVM's and MLIR's
# static archives (LLVM_LIBRARY_DIR/lib{LLVM,MLIR}*.a) instead of
# libLLVM.so and libMLIR.so. A process then starts without loading and
# relocating two large shared libraries (`pallasc --version` 47 -> 15 ms of
# CPU, --help 41 -> 11 ms, on a loaded machine), for a 156 MB executable
# and a link of ~15 s instead of ~2 s. Only `pallasc`:
# pallasc-opt, the unit tests and the fuzzers keep the shared libraries.
# Nothing pallasc loads at run time links LLVM or MLIR (the JIT resolves the
# kernels' calls in the process itself; libPallascLaunch is plain C++), so a
# process never holds two copies of them.
#
# How: MLIR's exported static libraries name "LLVM" (libLLVM.so) as their
# dependency, and our libraries name "LLVM" and "MLIR" (through
# add_mlir_library and mlir_target_link_libraries, as the packages are
# built with LLVM_LINK_LLVM_DYLIB). Each such link is rewritten into a
# generator expression on the property PALLASC_STATIC_LLVM of the target
# being linked: where it is set, MLIR's static libraries (by name, the ones
# each library lists) and LLVM's static component libraries instead;
# everywhere else exactly what was there.

if(NOT PALLASC_STATIC_LLVM)
  function(pallasc_static_llvm_library name)
  endfunction()
  return()
endif()

set(_pallasc_static "$<BOOL:$<TARGET_PROPERTY:PALLASC_STATIC_LLVM>>")

include(CheckLinkerFlag)
check_linker_flag(CXX "LINKER:-z,pack-relative-relocs" PALLASC_LINKER_HAS_RELR)

# LLVMSupport links zstd::libzstd_shared, which LLVMConfig.cmake finds only
# where libzstd's development files are installed; libLLVM.so links the
# runtime library, so the static link uses that one.
if(NOT TARGET zstd::libzstd_shared)
  find_library(PALLASC_ZSTD_LIBRARY NAMES zstd libzstd.so.1 REQUIRED)
  add_library(zstd::libzstd_shared SHARED IMPORTED)
  set_target_properties(zstd::libzstd_shared PROPERTIES
    IMPORTED_LOCATION "${PALLASC_ZSTD_LIBRARY}")
endif()

# Every static LLVM component library of the package: libLLVM.so holds
# them all, and MLIR's static libraries do not say which they need. The
# linker takes only the archive members something references. Left out:
# the libraries of tools (llvm-exegesis: libpfm, BOLT), and those needing
# what is not there (LLVMDebuginfod: CURL and libLLVM.so, LLVMLineEditor:
# LibEdit, LLVMExtensions and LLVMLTO: libPolly.a); pallasc needs none.
set(_pallasc_llvm_libs)
foreach(lib ${LLVM_AVAILABLE_LIBS})
  if(NOT lib MATCHES "^LLVM." OR lib MATCHES "^LLVM(Exegesis|BOLT)"
     OR NOT TARGET ${lib})
    continue()
  endif()
  get_target_property(_type ${lib} TYPE)
  if(_type STREQUAL "STATIC_LIBRARY")
    list(APPEND _pallasc_llvm_libs ${lib})
  endif()
endforeach()
# _pallasc_file_missing(target out): whether an imported target's file
# (of its first configuration) is missing.
function(_pallasc_file_missing target out)
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  list(GET configs 0 config)
  get_target_property(file ${target} IMPORTED_LOCATION_${config})
  if(EXISTS "${file}")
    set(${out} OFF PARENT_SCOPE)
  else()
    set(${out} ON PARENT_SCOPE)
  endif()
endfunction()

# Drop, until none is left to drop, each library whose file is missing or
# that links libLLVM.so, a target not found, another imported library whose
# file is missing (Polly) or a library dropped.
set(_pallasc_dropped LLVM)
set(_changed ON)
while(_changed)
  set(_changed OFF)
  foreach(lib ${_pallasc_llvm_libs})
    _pallasc_file_missing(${lib} _drop)
    get_target_property(_deps ${lib} INTERFACE_LINK_LIBRARIES)
    foreach(dep ${_deps})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      if(dep IN_LIST _pallasc_dropped OR (dep MATCHES "::" AND NOT TARGET ${dep}))
        set(_drop ON)
      elseif(TARGET ${dep} AND NOT dep MATCHES "^LLVM|::")
        _pallasc_file_missing(${dep} _missing)
        if(_missing)
          set(_drop ON)
        endif()
      endif()
    endforeach()
    if(_drop)
      list(REMOVE_ITEM _pallasc_llvm_libs ${lib})
      list(APPEND _pallasc_dropped ${lib})
      set(_changed ON)
    endif()
  endforeach()
endwhile()
add_library(PallascLLVMStaticLibs INTERFACE)
target_link_libraries(PallascLLVMStaticLibs INTERFACE ${_pallasc_llvm_libs})

set(_pallasc_llvm "$<IF:${_pallasc_static},PallascLLVMStaticLibs,LLVM>")

# _pallasc_static_rewrite(target property MLIR...): in a link property of
# `target`, "LLVM" -> the genex above and "MLIR" -> the items MLIR..., each
# also inside $<LINK_ONLY:...>.
function(_pallasc_static_rewrite target property)
  get_target_property(libs ${target} ${property})
  if(NOT libs)
    return()
  endif()
  set(out)
  foreach(lib ${libs})
    set(wrap OFF)
    if(lib MATCHES "^\\$<LINK_ONLY:(LLVM|MLIR)>$")
      set(lib ${CMAKE_MATCH_1})
      set(wrap ON)
    endif()
    if(lib STREQUAL "LLVM")
      set(items "${_pallasc_llvm}")
    elseif(lib STREQUAL "MLIR")
      set(items ${ARGN})
    else()
      set(items "${lib}")
    endif()
    foreach(item ${items})
      if(wrap)
        set(item "$<LINK_ONLY:${item}>")
      endif()
      list(APPEND out "${item}")
    endforeach()
  endforeach()
  set_property(TARGET ${target} PROPERTY ${property} "${out}")
endfunction()

# MLIR's imported static libraries: "LLVM" -> the genex above, and "MLIR"
# (MLIRExecutionEngine names libMLIR.so for the dialects and translations it
# may use) -> every static MLIR library, of which the linker again takes
# only what is referenced.
add_library(PallascMLIRStaticLibs INTERFACE)
get_directory_property(_imported IMPORTED_TARGETS)
foreach(t ${_imported})
  get_target_property(_type ${t} TYPE)
  if(t MATCHES "^MLIR" AND _type STREQUAL "STATIC_LIBRARY")
    target_link_libraries(PallascMLIRStaticLibs INTERFACE ${t})
    _pallasc_static_rewrite(${t} INTERFACE_LINK_LIBRARIES
      "$<IF:${_pallasc_static},PallascMLIRStaticLibs,MLIR>")
  endif()
endforeach()

# pallasc_static_llvm_library(target MLIR_LIBS...): in the link libraries of
# `target` (one of ours), "LLVM" -> the genex above, "MLIR" -> MLIR_LIBS
# where the linked target sets PALLASC_STATIC_LLVM, else "MLIR".
function(pallasc_static_llvm_library name)
  set(mlir "$<$<NOT:${_pallasc_static}>:MLIR>")
  foreach(lib ${ARGN})
    list(APPEND mlir "$<${_pallasc_static}:${lib}>")
  endforeach()
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    _pallasc_static_rewrite(${name} ${prop} ${mlir})
  endforeach()
endfunction()
