# The ascend back end's part of the build (src/CMakeLists.txt includes every
# src/backends/<name>/backend.cmake). Its device runs the simulator
# (runtime/ascend/sim): the simulator's host side is compiled into the
# library, so one copy of its state serves every launch; simulated kernels
# compile at run time against runtime/ascend/sim/include, installed as data.
list(APPEND SK_LIB_SOURCES ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/src/Simulator.cpp
  ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/src/VectorChecker.cpp)
list(APPEND SK_LIB_PRIVATE_INCLUDES ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include/
        DESTINATION ${SK_DATA_SUBDIR}/runtime/ascend/sim/include)
