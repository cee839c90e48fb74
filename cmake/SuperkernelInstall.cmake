# Installed CMake package: find_package(superkernel) -> superkernel::superkernel.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY runtime/include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Generated code is compiled at run time against these.
install(DIRECTORY templates/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/templates)
install(DIRECTORY runtime/include/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/runtime/include)
install(DIRECTORY runtime/src/cpu/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/runtime/src/cpu
        FILES_MATCHING PATTERN "*.c")

install(TARGETS superkernel superkernel_runtime EXPORT superkernelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT superkernelTargets NAMESPACE superkernel::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/superkernel)
configure_package_config_file(cmake/superkernelConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/superkernelConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/superkernel)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/superkernelConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/superkernelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/superkernelConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindHiredis.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/superkernel)
