# The ascend back ends' part of the build (src/CMakeLists.txt includes every
# src/backends/<name>/backend.cmake), for both targets. ascend (bisheng and
# CANN's runtime, dlopen'ed) needs nothing at build time. ascend-sim runs the
# simulator (runtime/ascend/sim): its host side and the vector model's
# checker are compiled into the library, so one copy of their state and code
# serves every launch; simulated kernels compile at run time against
# runtime/ascend/sim/include, installed as data. runtime/ascend/device holds
# the device's own kernel sources (the collective sub-kernel against CANN's
# Hccl client), installed as data for bisheng.
list(APPEND SK_LIB_SOURCES ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/src/Simulator.cpp
  ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/src/VectorChecker.cpp)
list(APPEND SK_LIB_PRIVATE_INCLUDES ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include/
        DESTINATION ${SK_DATA_SUBDIR}/runtime/ascend/sim/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ascend/device/
        DESTINATION ${SK_DATA_SUBDIR}/runtime/ascend/device)
