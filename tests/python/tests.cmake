# The Python package and superkernel.torch (label python), through unittest.
# They run Debian's /usr/bin/python3, which sees python3-torch and numpy
# (scripts/setup.sh installs them); a python3 earlier on PATH (pyenv) may not.
# Set SK_PYTHON to use another interpreter that has torch 1.13+.
# An instrumented library cannot be loaded into an uninstrumented python3, so
# sanitizer builds leave them out (as tests/capi/extra.cmake does).
set(SK_PYTHON "" CACHE FILEPATH "python3 for the Python tests (default: /usr/bin/python3, else python3 on PATH)")
set(_sk_py "${SK_PYTHON}")
if(NOT _sk_py)
  if(EXISTS /usr/bin/python3)
    set(_sk_py /usr/bin/python3)
  else()
    find_program(_sk_py_found python3)
    set(_sk_py "${_sk_py_found}")
  endif()
endif()
if(_sk_py AND SK_BUILD_PYTHON AND NOT SK_SANITIZE)
  file(GLOB _sk_py_tests CONFIGURE_DEPENDS RELATIVE "${CMAKE_CURRENT_LIST_DIR}" "${CMAKE_CURRENT_LIST_DIR}/test_*.py")
  foreach(f IN LISTS _sk_py_tests)
    string(REGEX REPLACE "\\.py$" "" m "${f}")
    add_test(NAME python.${m} COMMAND "${_sk_py}" -m unittest -v ${m} WORKING_DIRECTORY "${CMAKE_CURRENT_LIST_DIR}")
    # COST: ctest -j starts the costliest tests first; these are minutes of compiles each and come last by
    # number, so without it they would run alone at the end of the suite instead of beside the C++ tests.
    set_tests_properties(python.${m} PROPERTIES LABELS python TIMEOUT 1200 COST 1000
      ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;SK_LOG_LEVEL=warn;SK_TEST_BINARY_DIR=${PROJECT_BINARY_DIR}")
  endforeach()
endif()
