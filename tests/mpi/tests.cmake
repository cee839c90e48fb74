# Collectives over MPI (docs/COLLECTIVES.md), label `mpi`: every case runs
# under mpirun with 2 ranks of 1 worker each and takes seconds. Built only
# with MPI (SK_HAVE_MPI); a build without it has the unit tests of the op
# kind (tests/frontend, tests/plan) and no ranks to run.
if(NOT SK_HAVE_MPI OR NOT MPIEXEC_EXECUTABLE)
  return()
endif()

# CI may run as root; --oversubscribe: 2 ranks may exceed the cores lent.
set(_sk_mpi_env
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" "OMPI_MCA_rmaps_base_oversubscribe=1"
  "SK_LOG_LEVEL=warn" "SK_NUM_WORKERS=1" "SK_CACHE_DIR=${PROJECT_BINARY_DIR}/mpi-test-cache")
set(_sk_mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe -np 2)

add_executable(sk_test_mpi ${CMAKE_CURRENT_SOURCE_DIR}/mpi/CollectivesMpiTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/mpi/TransportsMpiTest.cpp ${CMAKE_CURRENT_SOURCE_DIR}/mpi/MpiTestMain.cpp)
sk_set_warnings(sk_test_mpi)
target_link_libraries(sk_test_mpi PRIVATE superkernel::superkernel GTest::gtest Threads::Threads)
add_test(NAME mpi.collectives_2ranks COMMAND ${_sk_mpirun} $<TARGET_FILE:sk_test_mpi>)
set_tests_properties(mpi.collectives_2ranks PROPERTIES LABELS mpi TIMEOUT 120
  ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=5000")
# Overlapping subgroups of 4 ranks on both transports (TransportsMpiTest.cpp; the other cases skip at 4 ranks).
add_test(NAME mpi.transports_4ranks COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe -np 4 $<TARGET_FILE:sk_test_mpi>
  --gtest_filter=TransportsFourRanks.*)
set_tests_properties(mpi.transports_4ranks PROPERTIES LABELS mpi TIMEOUT 120
  ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=20000")

# The same collectives on the simulators (targets cuda-sim and ascend-sim; docs/COLLECTIVES.md "On cuda-sim",
# "On ascend-sim"): each rank a process with its own simulated device of 2 SMs / 2 AI Cores (2 ranks share the
# cores lent); on ascend-sim the collective is a sub-kernel driving the simulated AscendC::Hccl client. For
# each simulator an all-reduce and an all-gather in one SuperKernel, checked against their definition, the cpu
# target and the other rank, and a session without a communicator (the error names the op); the device targets
# refusing collectives at plan time. Their bad input is the sk-compile cases *_sim_plan_mismatch below.
add_executable(sk_test_mpi_sim ${CMAKE_CURRENT_SOURCE_DIR}/mpi/SimCollectivesMpiTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/mpi/MpiTestMain.cpp)
sk_set_warnings(sk_test_mpi_sim)
target_link_libraries(sk_test_mpi_sim PRIVATE superkernel::superkernel GTest::gtest Threads::Threads)
add_test(NAME mpi.sim_collectives_2ranks COMMAND ${_sk_mpirun} $<TARGET_FILE:sk_test_mpi_sim>)
set_tests_properties(mpi.sim_collectives_2ranks PROPERTIES LABELS "mpi;cuda-sim;ascend-sim" TIMEOUT 180
  ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=5000;SK_CUDA_SIM_SMS=2;SK_ASCEND_AI_CORES=2")

# The C API's communicator (tests/capi/capi_mpi_test.c, a C11 program on MPI's
# C bindings) and Python's (tests/python/mpi_collectives.py, mpi4py): an
# all-reduce and an all-gather on both ranks, and handles that are not
# communicators. Sanitizer builds have no MPI, so neither is built there.
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND)
  add_executable(sk_test_capi_mpi ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_mpi_test.c)
  set_target_properties(sk_test_capi_mpi PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
  sk_set_warnings(sk_test_capi_mpi)
  target_link_libraries(sk_test_capi_mpi PRIVATE superkernel::c MPI::MPI_C)
  add_test(NAME mpi.capi_communicator_2ranks COMMAND ${_sk_mpirun} $<TARGET_FILE:sk_test_capi_mpi>)
  set_tests_properties(mpi.capi_communicator_2ranks PROPERTIES LABELS "mpi;capi" TIMEOUT 120
    ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=5000")
endif()
# _sk_py: the interpreter tests/python/tests.cmake chose (Debian's, which sees python3-mpi4py).
if(_sk_py AND SK_BUILD_PYTHON)
  execute_process(COMMAND "${_sk_py}" -c "import mpi4py" RESULT_VARIABLE _sk_mpi4py_rc OUTPUT_QUIET ERROR_QUIET)
  if(_sk_mpi4py_rc EQUAL 0)
    add_test(NAME mpi.python_communicator_2ranks
      COMMAND ${_sk_mpirun} "${_sk_py}" -m unittest -v mpi_collectives
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/python")
    set_tests_properties(mpi.python_communicator_2ranks PROPERTIES LABELS "mpi;python" TIMEOUT 120
      ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=5000;PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
  else()
    message(STATUS "superkernel: ${_sk_py} has no mpi4py (python3-mpi4py; scripts/setup.sh installs it): "
                   "the Python communicator test is left out")
  endif()
endif()

# sk-compile under mpirun: the tokens report, then each bad input ending
# every rank with its error (exit 4) well inside the case's limit.
set(_sk_c $<TARGET_FILE:sk-compile>)
set(_sk_d ${CMAKE_CURRENT_SOURCE_DIR}/mpi/data)
function(sk_mpi_case name timeout rc expect)
  string(REPLACE ";" "|" _cmd "${ARGN}")
  add_test(NAME mpi.${name} COMMAND ${CMAKE_COMMAND} "-DCMD=${_cmd}" -DTIMEOUT=${timeout} "-DEXPECT_RC=${rc}"
    "-DEXPECT=${expect}" -DWORKDIR=${_sk_d} -P ${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_case.cmake)
  set_tests_properties(mpi.${name} PROPERTIES LABELS mpi TIMEOUT 120
    ENVIRONMENT "${_sk_mpi_env};SK_WAIT_TIMEOUT_MS=2000")
endfunction()
if(TARGET sk-compile)
  sk_mpi_case(sk_compile_tokens 90 "^0$"
    "Collective ar: all_reduce sum of 4096 f32 over group tp.*runs beside indep|rank +fused tokens/s|total +[0-9]|identical after every token"
    ${_sk_mpirun} ${_sk_c} allreduce.json --run --tokens 3 --repeat 2)
  # MPMD: rank 0 and rank 1 run different lists.
  sk_mpi_case(plan_mismatch 60 "^[1-9]"
    "rank 0 of 2: .*collective op \"ar\" on rank 0 .*rank 1 runs another op.*ranks disagree on the plan|rank 1 of 2: .*collective op \"ar_other\" on rank 1 .*rank 0 runs another op"
    ${MPIEXEC_EXECUTABLE} --oversubscribe -np 1 ${_sk_c} allreduce.json --run --tokens 1 --repeat 1
    : -np 1 ${_sk_c} plan_other.json --run --tokens 1 --repeat 1)
  # The same on cuda-sim (the lists name the target): the collective kernel's CTA gets the mismatch from
  # the communicator and fails the simulated launch with it, naming the op.
  sk_mpi_case(cuda_sim_plan_mismatch 120 "^[1-9]"
    "rank 0 of 2: .*collective op \"ar\" on rank 0 .*rank 1 runs another op.*ranks disagree on the plan|rank 1 of 2: .*collective op \"ar_other\" on rank 1 .*rank 0 runs another op"
    ${MPIEXEC_EXECUTABLE} --oversubscribe -x SK_CUDA_SIM_SMS=2 -np 1 ${_sk_c} sim_allreduce.json --run --tokens 1 --repeat 1
    : -x SK_CUDA_SIM_SMS=2 -np 1 ${_sk_c} sim_plan_other.json --run --tokens 1 --repeat 1)
  # On ascend-sim: the Hccl task's Wait gets the mismatch from the communicator and fails the simulated launch
  # with it, naming the op.
  sk_mpi_case(ascend_sim_plan_mismatch 120 "^[1-9]"
    "rank 0 of 2: .*collective op \"ar\" on rank 0 .*rank 1 runs another op.*ranks disagree on the plan|rank 1 of 2: .*collective op \"ar_other\" on rank 1 .*rank 0 runs another op"
    ${MPIEXEC_EXECUTABLE} --oversubscribe -x SK_ASCEND_AI_CORES=2 -np 1 ${_sk_c} ascend_sim_allreduce.json --run --tokens 1 --repeat 1
    : -x SK_ASCEND_AI_CORES=2 -np 1 ${_sk_c} ascend_sim_plan_other.json --run --tokens 1 --repeat 1)
  sk_mpi_case(size_mismatch 60 "^[1-9]"
    "rank 0 of 2: .*rank 1 runs the same collective with buffers of all_reduce sum of 2048 f32 in|rank 1 of 2: .*rank 0 runs the same collective with buffers of all_reduce sum of 4096 f32 in"
    ${MPIEXEC_EXECUTABLE} --oversubscribe -np 1 ${_sk_c} allreduce.json --run --tokens 1 --repeat 1
    : -np 1 ${_sk_c} sizes_other.json --run --tokens 1 --repeat 1)
  # Collectives on two streams (stream-fusion=1, 2 workers per rank), independent of each other, with work of
  # different length before each: without the planner's order edges the ranks took them in different orders and
  # failed with the mismatch error on every run; with them both ranks run all 8 in recorded order.
  sk_mpi_case(two_streams_in_order 90 "^0$"
    "Collective ar1_0: .*waits for ar0_1 \\(event\\)|identical after every token"
    ${_sk_mpirun} -x SK_NUM_WORKERS=2 ${_sk_c} two_streams.json --run --tokens 4 --repeat 2)
  # A rank that hangs before the collective (a minute's sleep in the op
  # before it): the other waits SK_WAIT_TIMEOUT_MS and ends with its own
  # error naming the op and the rank, exit 4.
  sk_mpi_case(rank_hangs 60 "^4$"
    "rank 0 of 2: .*collective op \"ar\" on rank 0: no answer from rank 1 within 2000 ms"
    ${_sk_mpirun} -x SK_TEST_STALL_RANK=1 ${_sk_c} dies.json --run --tokens 1 --repeat 1)
  # The same over MPI messages (the case above goes through shared memory: both ranks share this host).
  sk_mpi_case(rank_hangs_over_mpi 60 "^4$"
    "rank 0 of 2: .*collective op \"ar\" on rank 0: no answer from rank 1 within 2000 ms"
    ${_sk_mpirun} -x SK_TEST_STALL_RANK=1 -x SK_COLLECTIVE_TRANSPORT=mpi ${_sk_c} dies.json --run --tokens 1 --repeat 1)
  # A rank killed mid-step (SIGKILL in the op before the collective): mpirun
  # ends the job and names the rank; nothing waits past the case's limit.
  sk_mpi_case(rank_killed 60 "^[1-9]"
    "rank 1 .*exited on signal 9"
    ${MPIEXEC_EXECUTABLE} --oversubscribe -np 2 -x SK_TEST_DIE_RANK=1 ${_sk_c} dies.json --run --tokens 1 --repeat 1)
endif()
