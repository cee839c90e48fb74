# One bad-input case of the MPI collectives, run as `cmake -P` by ctest
# (tests/mpi/tests.cmake): runs CMD (a ;-list, argv only, no shell) with a
# hard TIMEOUT, then checks its exit code and output. Nothing may hang: the
# timeout here is far above what the case needs (SK_WAIT_TIMEOUT_MS is set
# low), so reaching it is the failure "a collective hung".
#   -DCMD=a|b|c (argv items split at |)  -DTIMEOUT=s  -DEXPECT_RC=regex
#   -DEXPECT=regex|regex...  -DWORKDIR=dir
string(REPLACE "|" ";" _cmd "${CMD}")
string(REPLACE "|" ";" EXPECT "${EXPECT}")
execute_process(COMMAND ${_cmd} WORKING_DIRECTORY "${WORKDIR}" TIMEOUT ${TIMEOUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}\n${err}")
if(NOT rc MATCHES "${EXPECT_RC}")
  message(FATAL_ERROR "exit status '${rc}', expected '${EXPECT_RC}' (a timeout here means a hang)\n${all}")
endif()
foreach(re IN LISTS EXPECT)
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "output lacks /${re}/:\n${all}")
  endif()
endforeach()
message(STATUS "ok (exit ${rc})")
