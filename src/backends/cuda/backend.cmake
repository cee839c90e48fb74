# The cuda and cuda-sim back ends' part of the build (src/CMakeLists.txt
# includes every src/backends/<name>/backend.cmake). cuda-sim's device runs the
# cuda simulator (runtime/cuda/sim), whose host side is compiled into the
# library; generated code compiles at run time against runtime/cuda/include
# (nvcc) or runtime/cuda/sim/include (the simulator), installed as data.
list(APPEND SK_LIB_SOURCES ${PROJECT_SOURCE_DIR}/runtime/cuda/sim/src/CudaSim.cpp)
list(APPEND SK_LIB_PRIVATE_INCLUDES ${PROJECT_SOURCE_DIR}/runtime/cuda/sim/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cuda/include/ DESTINATION ${SK_DATA_SUBDIR}/runtime/cuda/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cuda/sim/include/
        DESTINATION ${SK_DATA_SUBDIR}/runtime/cuda/sim/include)
# The sync calibration's kernel (CudaCalibrate.cpp reads it at run time): beside include/, not in it, so it is
# not part of the runtime digest every cuda key hashes (its own text is the key of its build).
install(FILES ${PROJECT_SOURCE_DIR}/runtime/cuda/calibration/sync_calibration.cu
        DESTINATION ${SK_DATA_SUBDIR}/runtime/cuda/calibration)
