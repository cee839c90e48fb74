# The cuda back end's tests (included from tests/CMakeLists.txt):
#   sk_test_cuda      label cuda: emitter goldens, nvcc compiles of the goldens and of the examples through
#                     sk-compile --target cuda, the no-device error. Needs no GPU; what needs nvcc skips with
#                     the reason where it is absent.
#   sk_test_cuda_gpu  label gpu: fused vs unfused on a GPU; every test skips with the reason where
#                     cudaGetDeviceCount finds no device.
foreach(_sk_cuda_t sk_test_cuda sk_test_cuda_gpu)
  if(_sk_cuda_t STREQUAL "sk_test_cuda")
    file(GLOB _sk_cuda_src CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/Cuda*Test.cpp)
    set(_sk_cuda_label cuda)
  else()
    file(GLOB _sk_cuda_src CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gpu/*Test.cpp)
    set(_sk_cuda_label gpu)
  endif()
  add_executable(${_sk_cuda_t} ${_sk_cuda_src})
  sk_set_warnings(${_sk_cuda_t})
  add_dependencies(${_sk_cuda_t} sk-compile sk-cache)
  target_include_directories(${_sk_cuda_t} PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${_sk_cuda_t} PRIVATE superkernel::superkernel GTest::gtest GTest::gtest_main
    fmt::fmt spdlog::spdlog Threads::Threads)
  target_compile_definitions(${_sk_cuda_t} PRIVATE
    SK_SOURCE_ROOT="${PROJECT_SOURCE_DIR}" SK_BINARY_ROOT="${PROJECT_BINARY_DIR}"
    SK_COMPILE_BIN="$<TARGET_FILE:sk-compile>" SK_CACHE_BIN="$<TARGET_FILE:sk-cache>")
  gtest_discover_tests(${_sk_cuda_t} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS ${_sk_cuda_label} ENVIRONMENT "SK_LOG_LEVEL=warn" TIMEOUT 600)
endforeach()
