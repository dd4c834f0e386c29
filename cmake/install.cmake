# SPDX-License-Identifier: Apache-2.0 OR MIT
# `cmake --install <build> [--prefix P]`: what a user or a package of proofpipe gets.
#
#   bin/proofpipe                          -> ../libexec/proofpipe/proofpipe (a relative symlink)
#   libexec/proofpipe/proofpipe            the CLI
#   libexec/proofpipe/libproofpipe_service_cli.so   the daemon's module (PROOFPIPE_SERVICE): the
#                                          CLI loads it from beside its own executable, so both
#                                          live in a private folder and PATH gets the link
#   lib/libproofpipe.so.X.Y.Z, .so.<SOVERSION>, .so   the C API (SONAME: CMakeLists.txt)
#   lib/libproofpipe_supraseal.so, lib/libproofpipe_cuzk.so   the drop-ins (the Rust crates in
#                                          contrib/ link them by that name: no version in it)
#   include/proofpipe/proofpipe.h          the C API's one header (self-contained; the C++ headers
#                                          under include/proofpipe/ are internal and not installed)
#   lib/cmake/proofpipe/                   find_package(proofpipe CONFIG): proofpipe::proofpipe
#                                          (libproofpipe.so), proofpipe::supraseal, proofpipe::cuzk
#   lib/pkgconfig/proofpipe.pc             pkg-config: cflags and libs of libproofpipe.so
#   share/doc/proofpipe/                   LICENSE, LICENSE-APACHE, LICENSE-MIT, README.md
#
# (lib is CMAKE_INSTALL_LIBDIR: lib/x86_64-linux-gnu when configured for the prefix /usr.) The
# CMake package and proofpipe.pc are relocatable: both find the prefix from their own location,
# so `--prefix` at install time and DESTDIR staging give working files.
#
# Run-time search paths: the installed programs and libraries need nothing from the prefix (the
# core, engine and GPU code are linked in statically; the CUDA runtime too), only system
# libraries; INSTALL_RPATH_USE_LINK_PATH keeps the folder of any library linked from outside the
# system's folders (a TBB or gRPC of one's own), as the build tree had it.
include(CMakePackageConfigHelpers)

set(_pp_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/proofpipe)
set(_pp_cli_dir ${CMAKE_INSTALL_LIBEXECDIR}/proofpipe)

set(_pp_installed proofpipe proofpipe_c proofpipe_supraseal proofpipe_cuzk)
if(TARGET proofpipe_service_cli)
  list(APPEND _pp_installed proofpipe_service_cli)
endif()
set_target_properties(${_pp_installed} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(proofpipe_supraseal PROPERTIES EXPORT_NAME supraseal)
set_target_properties(proofpipe_cuzk PROPERTIES EXPORT_NAME cuzk)

install(TARGETS proofpipe_c proofpipe_supraseal proofpipe_cuzk
        EXPORT proofpipeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/proofpipe/proofpipe.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/proofpipe COMPONENT Development)

install(TARGETS proofpipe RUNTIME DESTINATION ${_pp_cli_dir} COMPONENT Runtime)
if(TARGET proofpipe_service_cli)
  install(TARGETS proofpipe_service_cli LIBRARY DESTINATION ${_pp_cli_dir} COMPONENT Runtime)
endif()
# bin/proofpipe: a relative link to the CLI (relative between the two folders, absolute if either
# was given as an absolute path), made at install time under the prefix of that moment.
foreach(_d BINDIR LIBEXECDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
    set(_pp_abs_${_d} "${CMAKE_INSTALL_${_d}}")
  else()
    set(_pp_abs_${_d} "/${CMAKE_INSTALL_${_d}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBEXECDIR}")
  set(_pp_cli_target "${_pp_abs_LIBEXECDIR}/proofpipe/proofpipe")
else()
  file(RELATIVE_PATH _pp_cli_target "${_pp_abs_BINDIR}" "${_pp_abs_LIBEXECDIR}/proofpipe/proofpipe")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
  set(_pp_link_dir "\$ENV{DESTDIR}${CMAKE_INSTALL_BINDIR}")
else()
  set(_pp_link_dir "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}")
endif()
install(CODE "
  set(_link \"${_pp_link_dir}/proofpipe\")
  message(STATUS \"Installing: \${_link} -> ${_pp_cli_target}\")
  file(MAKE_DIRECTORY \"${_pp_link_dir}\")
  file(REMOVE \"\${_link}\")
  file(CREATE_LINK \"${_pp_cli_target}\" \"\${_link}\" SYMBOLIC)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_link}\")
" COMPONENT Runtime)

# The CMake package: proofpipeConfig.cmake (the imported targets), and the version file. While the
# major version is 0 a minor release may break the ABI (the SONAME rule in CMakeLists.txt), so a
# request for 0.6 accepts 0.6.x only; from 1.0 on, the same major version.
install(EXPORT proofpipeTargets NAMESPACE proofpipe:: DESTINATION ${_pp_cmake_dir} COMPONENT Development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/proofpipeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/proofpipeConfig.cmake
                              INSTALL_DESTINATION ${_pp_cmake_dir})
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_pp_compatibility SameMinorVersion)
else()
  set(_pp_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/proofpipeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ${_pp_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/cmake/proofpipeConfig.cmake ${PROJECT_BINARY_DIR}/cmake/proofpipeConfigVersion.cmake
        DESTINATION ${_pp_cmake_dir} COMPONENT Development)

# proofpipe.pc, relocatable: prefix=${pcfiledir}/<back up to the prefix> (pkg-config and pkgconf
# both define pcfiledir), so the file is right under whatever prefix the tree is installed. Folders
# given as absolute paths are written as they are.
set(_pp_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PROOFPIPE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(PROOFPIPE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _pp_up "/${_pp_pc_dir}" "/")
  string(REGEX REPLACE "/$" "" _pp_up "${_pp_up}")
  set(PROOFPIPE_PC_PREFIX "\${pcfiledir}/${_pp_up}")
  set(PROOFPIPE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(PROOFPIPE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(PROOFPIPE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/proofpipe.pc.in ${PROJECT_BINARY_DIR}/proofpipe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/proofpipe.pc DESTINATION ${_pp_pc_dir} COMPONENT Development)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/LICENSE-APACHE ${PROJECT_SOURCE_DIR}/LICENSE-MIT
              ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Runtime)
