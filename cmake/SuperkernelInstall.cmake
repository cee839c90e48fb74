# Installed CMake package: find_package(superkernel) -> superkernel::superkernel.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Generated code is compiled at run time against these (per target:
# templates/<target>/, kernels/<target>/, runtime/<target>/); found at run
# time relative to the installed binaries (support/Paths.h). Each back end
# installs its own runtime files and runtime headers (src/backends/<name>/backend.cmake).
install(DIRECTORY templates/ DESTINATION ${SK_DATA_SUBDIR}/templates)
install(DIRECTORY kernels/ DESTINATION ${SK_DATA_SUBDIR}/kernels)

install(TARGETS superkernel superkernel_runtime superkernel_c EXPORT superkernelTargets
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

# pkg-config: lib/pkgconfig/superkernel.pc with paths relative to itself.
file(RELATIVE_PATH SK_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" SK_PC_PREFIX_FROM_PCDIR "${SK_PC_PREFIX_FROM_PCDIR}")
set(SK_PC_MPI "")
if(SK_HAVE_MPI)
  set(SK_PC_MPI " ompi-c")
endif()
configure_file(cmake/superkernel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/superkernel.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/superkernel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
