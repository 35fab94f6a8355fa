# pallasc_add_kernel(): compile a Pallas kernel as an ordinary build step
# and get a library target whose public header is the generated launcher.
#
#   pallasc_add_kernel(<target>
#     KERNEL k.mlir SPEC s.json
#     TARGETS cpu [cuda:sm_90a ...] [rocm:gfx942 ...]
#     [NAME n]                      # default: <target>
#     [TRANSFORMS --vmap 0:4 ...]   # pallasc transform flags
#     [OPTIONS -O3 ...]             # other pallasc flags
#     [ALL])                        # build it on every `cmake --build`
#
# Runs `pallasc k.mlir --spec s.json --name n --target ... --emit=header,lib
# -o <binary dir>/pallasc/<target>` with a depfile, so the kernel is rebuilt
# exactly when the kernel, the spec or pallasc itself changes (Ninja and
# Makefiles). The output names come from NAME, never from the spec's `name`:
# editing the spec cannot leave stale outputs behind. <target> is an
# INTERFACE library: include "n.h" and call n_cpu(...) (TARGETS cpu) or
# n_cuda(..., stream) (TARGETS cuda:<arch>...) or n_rocm(..., stream)
# (TARGETS rocm:<arch>...); linking <target> links n.a and the launch
# runtime (pallasc::launch), never CUDA or ROCm (their drivers are loaded
# at run time). The generated files are in <binary dir>/pallasc/<target>/
# (n.h, n.a, n.manifest.json, the per-target artifacts). Launchers are
# generated for the cpu, cuda and rocm targets (not tpu), so TARGETS must
# contain one of them (see docs/integration.md).
#
# A kernel is built when something linking <target> is, or with ALL on
# every build; the target pallasc_kernel_artifacts builds every kernel of
# the project (`cmake --build B --target pallasc_kernel_artifacts`). The
# target's properties name the files: PALLASC_HEADER, PALLASC_LIBRARY,
# PALLASC_MANIFEST, PALLASC_ARTIFACTS (the per-target artifacts),
# PALLASC_OUTPUT_DIR.
#
#   pallasc_install_kernels(TARGETS <target> ... DESTINATION dir
#                           [COMPONENT c])
#
# installs each kernel's manifest, artifacts, header and library into
# <prefix>/dir (the manifest names the artifacts beside it), and builds
# those kernels on every build, as `cmake --install` needs them.

function(pallasc_add_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "ALL" "KERNEL;SPEC;NAME"
                        "TARGETS;TRANSFORMS;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "pallasc_add_kernel(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required KERNEL SPEC TARGETS)
    if(NOT ARG_${required})
      message(FATAL_ERROR "pallasc_add_kernel(${target}): ${required} is required")
    endif()
  endforeach()
  set(has_launcher_target OFF)
  foreach(t IN LISTS ARG_TARGETS)
    if(t STREQUAL "cpu" OR t MATCHES "^(cuda|rocm):")
      set(has_launcher_target ON)
    endif()
  endforeach()
  if(NOT has_launcher_target)
    message(FATAL_ERROR
      "pallasc_add_kernel(${target}): TARGETS must contain cpu, a cuda:<arch> "
      "or a rocm:<arch>: pallasc generates launchers for those only (got "
      "${ARG_TARGETS})")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME "${target}")
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR
      "pallasc_add_kernel(${target}): NAME must be a C identifier, got '${ARG_NAME}'")
  endif()

  get_filename_component(kernel "${ARG_KERNEL}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(spec "${ARG_SPEC}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/pallasc/${target}")
  set(header "${dir}/${ARG_NAME}.h")
  set(library "${dir}/${ARG_NAME}.a")
  set(manifest "${dir}/${ARG_NAME}.manifest.json")
  set(depfile "${dir}/${ARG_NAME}.d")
  set(flags)
  set(byproducts)
  foreach(t IN LISTS ARG_TARGETS)
    list(APPEND flags --target "${t}")
    if(t STREQUAL "cpu")
      list(APPEND byproducts "${dir}/${ARG_NAME}.cpu.o")
    elseif(t MATCHES "^cuda:(.*)$")
      list(APPEND byproducts "${dir}/${ARG_NAME}.${CMAKE_MATCH_1}.ptx")
    elseif(t MATCHES "^rocm:(.*)$")
      list(APPEND byproducts "${dir}/${ARG_NAME}.${CMAKE_MATCH_1}.hsaco")
    endif()
  endforeach()

  # -MT: Ninja wants the depfile to name the first OUTPUT.
  file(MAKE_DIRECTORY "${dir}")
  add_custom_command(
    OUTPUT "${header}" "${library}" "${manifest}"
    BYPRODUCTS ${byproducts}
    COMMAND pallasc::pallasc "${kernel}" --spec "${spec}" --name "${ARG_NAME}"
            ${flags} --emit=header,lib ${ARG_TRANSFORMS} ${ARG_OPTIONS}
            -o "${dir}" -MD -MF "${depfile}" -MT "${header}"
    DEPENDS "${kernel}" "${spec}" "$<TARGET_FILE:pallasc::pallasc>"
    DEPFILE "${depfile}"
    COMMENT "pallasc: ${ARG_NAME} (${ARG_TARGETS})"
    VERBATIM)
  set(all)
  if(ARG_ALL)
    set(all ALL)
  endif()
  add_custom_target(${target}_pallasc ${all} DEPENDS "${header}" "${library}")
  if(NOT TARGET pallasc_kernel_artifacts)
    add_custom_target(pallasc_kernel_artifacts)
  endif()
  add_dependencies(pallasc_kernel_artifacts ${target}_pallasc)

  # n.a as an imported static library that needs the launch runtime: CMake
  # then puts the runtime after every kernel library on the link line (a
  # plain "n.a pallasc::launch" is deduplicated to the first kernel's
  # place, and a later kernel's rocm or cuda entry point would not find
  # its runtime function in the archive).
  add_library(${target}_archive STATIC IMPORTED GLOBAL)
  set_target_properties(${target}_archive PROPERTIES
    IMPORTED_LOCATION "${library}"
    INTERFACE_LINK_LIBRARIES pallasc::launch)
  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE "${dir}")
  target_link_libraries(${target} INTERFACE ${target}_archive)
  add_dependencies(${target} ${target}_pallasc)
  set_target_properties(${target} PROPERTIES
    PALLASC_HEADER "${header}" PALLASC_LIBRARY "${library}"
    PALLASC_MANIFEST "${manifest}" PALLASC_ARTIFACTS "${byproducts}"
    PALLASC_OUTPUT_DIR "${dir}" PALLASC_NAME "${ARG_NAME}")
endfunction()

function(pallasc_install_kernels)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DESTINATION;COMPONENT" "TARGETS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "pallasc_install_kernels: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGETS OR NOT ARG_DESTINATION)
    message(FATAL_ERROR
      "pallasc_install_kernels: TARGETS and DESTINATION are required")
  endif()
  set(component)
  if(ARG_COMPONENT)
    set(component COMPONENT "${ARG_COMPONENT}")
  endif()
  set(names)
  set(builds)
  foreach(t IN LISTS ARG_TARGETS)
    if(NOT TARGET ${t}_pallasc)
      message(FATAL_ERROR
        "pallasc_install_kernels: ${t} is not a pallasc_add_kernel() target")
    endif()
    get_target_property(name ${t} PALLASC_NAME)
    if(name IN_LIST names)
      message(FATAL_ERROR
        "pallasc_install_kernels: two kernels named ${name} would install "
        "the same files into ${ARG_DESTINATION}")
    endif()
    list(APPEND names "${name}")
    get_target_property(header ${t} PALLASC_HEADER)
    get_target_property(library ${t} PALLASC_LIBRARY)
    get_target_property(manifest ${t} PALLASC_MANIFEST)
    get_target_property(artifacts ${t} PALLASC_ARTIFACTS)
    if(NOT artifacts)
      set(artifacts)
    endif()
    install(FILES "${manifest}" ${artifacts} "${header}" "${library}"
            DESTINATION "${ARG_DESTINATION}" ${component})
    list(APPEND builds ${t}_pallasc)
  endforeach()
  # `cmake --install` copies what the default build made.
  string(MD5 id "${ARG_TARGETS};${ARG_DESTINATION}")
  string(SUBSTRING "${id}" 0 8 id)
  add_custom_target(pallasc_install_kernels_${id} ALL)
  add_dependencies(pallasc_install_kernels_${id} ${builds})
endfunction()
