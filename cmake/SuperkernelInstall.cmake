# Installed CMake package: find_package(superkernel) -> superkernel::superkernel.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY runtime/cpu/include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Generated code is compiled at run time against these (per target:
# templates/<target>/, kernels/<target>/, runtime/<target>/).
install(DIRECTORY templates/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/templates)
install(DIRECTORY kernels/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/kernels)
install(DIRECTORY runtime/cpu/include/ DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/runtime/cpu/include)
install(FILES runtime/cpu/src/kernel_abi.c DESTINATION ${CMAKE_INSTALL_DATADIR}/superkernel/runtime/cpu/src)

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
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/superkernel)
