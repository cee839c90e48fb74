# The cpu back end's part of the build (src/CMakeLists.txt includes every
# src/backends/<name>/backend.cmake). Its device is the host executor
# (superkernel_runtime, runtime/cpu), linked publicly: its headers are part of
# the public API (superkernel/runtime/Executor.h). Generated code compiles at
# run time against runtime/cpu/include and links runtime/cpu/src/kernel_abi.c,
# installed as data.
list(APPEND SK_LIB_PUBLIC_LIBS superkernel_runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cpu/include/superkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cpu/include/ DESTINATION ${SK_DATA_SUBDIR}/runtime/cpu/include)
install(FILES ${PROJECT_SOURCE_DIR}/runtime/cpu/src/kernel_abi.c DESTINATION ${SK_DATA_SUBDIR}/runtime/cpu/src)
