# Installs libbraid, its public headers and a CMake package: find_package(braid) gives braid::braid.
#
#   cmake --install build/release --prefix /opt/braid
#   # in the application's CMakeLists.txt (configured with -DCMAKE_PREFIX_PATH=/opt/braid):
#   find_package(braid 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE braid::braid)      # #include <braid/predictor.h>
#
# The public headers are include/braid/ (and the generated braid.pb.h beside them once installed);
# they include each other as "braid/..." in-tree and installed alike. tests/embed checks all of this.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BRAID_PUBLIC_HEADERS include/braid/custom_op.h include/braid/data_source.h
  include/braid/device_memory.h
  include/braid/dtype.h include/braid/model_io.h include/braid/predictor.h
  include/braid/process_group.h include/braid/run_options.h include/braid/session.h
  include/braid/status.h include/braid/tensor_view.h include/braid/trainer.h)
# The installed library finds dependencies outside the system paths (a TSan oneTBB in
# BRAID_TBB_ROOT) through its RUNPATH; system libraries are left to the loader.
set_target_properties(braid PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(FILES ${BRAID_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid)
# The NetDef classes, for Predictor::FromNetDefs (applications that use them link protobuf too).
install(FILES ${PROJECT_BINARY_DIR}/proto/braid.pb.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid)
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
