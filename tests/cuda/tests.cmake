# The cuda back end's tests (included from tests/CMakeLists.txt):
#   sk_test_cuda      label cuda: emitter goldens, nvcc compiles of the goldens and of the examples through
#                     sk-compile --target cuda, the no-device error. Needs no GPU; what needs nvcc skips with
#                     the reason where it is absent.
#   sk_test_cuda_gpu  label gpu: fused vs unfused on a GPU; every test skips with the reason where
#                     cudaGetDeviceCount finds no device.
# A stand-in libcudart (data/fake_cudart.c) that reports a GPU of FAKE_CUDART_SMS SMs: the plan must not
# depend on whether a GPU is present (CudaPlanTest.cpp).
add_library(sk_test_fake_cudart SHARED ${CMAKE_CURRENT_LIST_DIR}/data/fake_cudart.c)
sk_set_warnings(sk_test_fake_cudart)
# The same stand-in as a runtime older than CUDA 11.8 (no cudaLaunchKernelExC): the Graph + PDL baseline is skipped.
add_library(sk_test_fake_cudart_old SHARED ${CMAKE_CURRENT_LIST_DIR}/data/fake_cudart.c)
sk_set_warnings(sk_test_fake_cudart_old)
target_compile_definitions(sk_test_fake_cudart_old PRIVATE FAKE_CUDART_NO_LAUNCH_EX)
# A stand-in libnccl that records the cuda device's NCCL set-up calls (CudaNcclTest.cpp; no GPU or NCCL needed).
add_library(sk_test_fake_nccl SHARED ${CMAKE_CURRENT_LIST_DIR}/data/fake_nccl.c)
sk_set_warnings(sk_test_fake_nccl)
# SK_BUILD_CUDA_TESTS=OFF (CI's sanitizer build) leaves out the binaries of labels cuda and gpu; the simulator's
# engine (sk_test_cuda_sim, label cuda-sim) builds either way.
if(SK_BUILD_CUDA_TESTS)
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
    SK_COMPILE_BIN="$<TARGET_FILE:sk-compile>" SK_CACHE_BIN="$<TARGET_FILE:sk-cache>"
    SK_FAKE_CUDART="$<TARGET_FILE:sk_test_fake_cudart>" SK_FAKE_CUDART_OLD="$<TARGET_FILE:sk_test_fake_cudart_old>"
    SK_FAKE_NCCL="$<TARGET_FILE:sk_test_fake_nccl>")
  add_dependencies(${_sk_cuda_t} sk_test_fake_cudart sk_test_fake_cudart_old sk_test_fake_nccl)
  gtest_discover_tests(${_sk_cuda_t} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS ${_sk_cuda_label} ENVIRONMENT "SK_LOG_LEVEL=warn" TIMEOUT 600)
endforeach()
endif()

# The cuda simulator (target cuda-sim, runtime/cuda/sim):
#   sk_test_cuda_sim      label cuda-sim (TSan runs it too): the engine on kernels compiled as simulated CUDA
#                         (sim/sim_kernels.cpp: C++ with sim_device.h force-included at -O2, as the recipe
#                         compiles, not at the tests' -O0).
#   sk_test_cuda_sim_run  label cuda: every gpu/*Test.cpp (the same glob as sk_test_cuda_gpu, so a new gpu test
#                         file runs on cuda-sim too, never on a GPU only) with its checks (fused vs unfused, cuda vs
#                         cpu) on cuda-sim, which needs only the host compiler.
add_executable(sk_test_cuda_sim ${CMAKE_CURRENT_LIST_DIR}/sim/CudaSimTest.cpp ${CMAKE_CURRENT_LIST_DIR}/sim/CudaSimSyncTest.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sim/sim_kernels.cpp)
sk_set_warnings(sk_test_cuda_sim)
set(_sk_sim_include ${PROJECT_SOURCE_DIR}/runtime/cuda/sim/include)
target_include_directories(sk_test_cuda_sim PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${_sk_sim_include}
  ${PROJECT_SOURCE_DIR}/runtime/cuda/include)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/sim/sim_kernels.cpp PROPERTIES
  COMPILE_OPTIONS "-include;${_sk_sim_include}/superkernel/cuda/sim_device.h;-Wno-unused-parameter;-Wno-unused-function;-O2")
target_link_libraries(sk_test_cuda_sim PRIVATE superkernel::superkernel GTest::gtest GTest::gmock GTest::gtest_main
  Threads::Threads)
gtest_discover_tests(sk_test_cuda_sim DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS cuda-sim ENVIRONMENT "SK_LOG_LEVEL=warn" TIMEOUT 300)

if(SK_BUILD_CUDA_TESTS)
file(GLOB _sk_cuda_sim_run_src CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gpu/*Test.cpp)
add_executable(sk_test_cuda_sim_run ${_sk_cuda_sim_run_src})
sk_set_warnings(sk_test_cuda_sim_run)
add_dependencies(sk_test_cuda_sim_run sk-compile sk-cache)
target_include_directories(sk_test_cuda_sim_run PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(sk_test_cuda_sim_run PRIVATE superkernel::superkernel GTest::gtest GTest::gtest_main
  fmt::fmt spdlog::spdlog Threads::Threads)
target_compile_definitions(sk_test_cuda_sim_run PRIVATE SK_RUN_TARGET="cuda-sim" SK_RUN_TARGET_IS_SIM=1
  SK_SOURCE_ROOT="${PROJECT_SOURCE_DIR}" SK_BINARY_ROOT="${PROJECT_BINARY_DIR}"
  SK_COMPILE_BIN="$<TARGET_FILE:sk-compile>" SK_CACHE_BIN="$<TARGET_FILE:sk-cache>")
gtest_discover_tests(sk_test_cuda_sim_run DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS cuda ENVIRONMENT "SK_LOG_LEVEL=warn" TIMEOUT 900)
endif()
