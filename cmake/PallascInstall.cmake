# Install rules and the CMake package.
#
#   cmake --install BUILD --prefix P
#
# installs P/bin/pallasc, P/bin/pallasc-opt, P/lib/libPallascLaunch.a (the
# launcher runtime, pallasc::launch), P/lib/cmake/pallasc/
# (pallascConfig.cmake, its version file, the exported targets,
# pallasc_add_kernel() and pallasc_add_lit_tests()) and P/share/pallasc/lit/
# (the lit configuration of kernel test suites), so that a
# consumer project finds it with
#
#   find_package(pallasc 0.2 CONFIG REQUIRED)   # CMAKE_PREFIX_PATH=P
#
# The package is relocatable: every path in it is computed from the location
# of pallascConfig.cmake, and the tools find what they need relative to
# themselves or on the system (LLVM, ptxas, ld.lld, ROCm's device libraries),
# never in the build tree.

include(CMakePackageConfigHelpers)

set(PALLASC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pallasc"
    CACHE STRING "Where pallascConfig.cmake is installed, under the prefix")
# The lit configuration of users' kernel test suites (docs/testing.md).
set(PALLASC_INSTALL_LITDIR "${CMAKE_INSTALL_DATADIR}/pallasc/lit"
    CACHE STRING "Where the lit configuration is installed, under the prefix")

install(TARGETS pallasc pallasc-opt
  EXPORT pallascTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT pallasc)

# The runtime generated launchers link (pallasc::launch): a static library
# of plain C++17, needing only libdl.
install(TARGETS PallascLaunch
  EXPORT pallascTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT pallasc)

install(EXPORT pallascTargets
  NAMESPACE pallasc::
  DESTINATION ${PALLASC_INSTALL_CMAKEDIR}
  COMPONENT pallasc)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/pallascConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/pallascConfig.cmake
  INSTALL_DESTINATION ${PALLASC_INSTALL_CMAKEDIR}
  PATH_VARS PALLASC_INSTALL_LITDIR)
# 0.x: a minor version may break, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/pallascConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/pallascConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/pallascConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/PallascAddKernel.cmake
  ${PROJECT_SOURCE_DIR}/cmake/PallascAddLitTests.cmake
  DESTINATION ${PALLASC_INSTALL_CMAKEDIR}
  COMPONENT pallasc)
install(FILES
  ${PROJECT_SOURCE_DIR}/cmake/lit/lit.cfg.py
  ${PROJECT_SOURCE_DIR}/cmake/lit/lit.site.cfg.py.in
  DESTINATION ${PALLASC_INSTALL_LITDIR}
  COMPONENT pallasc)

# The installed tools find LLVM's and MLIR's shared libraries where this
# build found them (the system's LLVM 22), and anything installed beside
# them in PREFIX/lib; the build tree is never on their search path.
set_target_properties(pallasc pallasc-opt PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")

# The Bazel rules (bazel/defs.bzl, deps.bzl; docs/bazel.md), a repository of
# their own: local_repository(name = "pallasc", path = "P/share/pallasc/bazel").
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bazel/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/pallasc/bazel
  COMPONENT pallasc)
