# Installs libbraid, its public headers and a CMake package: find_package(braid) gives braid::braid.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BRAID_PUBLIC_HEADERS runtime/status.h runtime/session.h)
install(FILES ${BRAID_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid)
install(TARGETS braid EXPORT braidTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT braidTargets NAMESPACE braid:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
configure_package_config_file(cmake/braidConfig.cmake.in
  ${PROJECT_BINARY_DIR}/braidConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/braidConfig.cmake ${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
