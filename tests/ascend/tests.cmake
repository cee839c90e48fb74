# The ascend back end's tests: sk_test_ascend (included from tests/CMakeLists.txt).
# SimKernels.cpp is simulated Ascend C: it compiles against the simulator's
# kernel_operator.h only. ENABLE_EXPORTS puts the kernels in the dynamic symbol
# table so the simulator's preload check can resolve them as on a kernel .so.
file(GLOB SK_ASCEND_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_executable(sk_test_ascend ${SK_ASCEND_TEST_SOURCES})
sk_set_warnings(sk_test_ascend)
set_target_properties(sk_test_ascend PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(sk_test_ascend PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(sk_test_ascend PRIVATE superkernel::ascend_sim GTest::gtest GTest::gtest_main
  fmt::fmt Threads::Threads)
target_compile_definitions(sk_test_ascend PRIVATE
  SK_SOURCE_ROOT="${PROJECT_SOURCE_DIR}" SK_BINARY_ROOT="${PROJECT_BINARY_DIR}")
gtest_discover_tests(sk_test_ascend DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS ascend ENVIRONMENT "SK_LOG_LEVEL=warn")
