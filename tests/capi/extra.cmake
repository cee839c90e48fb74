# The C API from C (a C11 program) and from Python (ctypes), both against
# libsuperkernel_c.so.
add_executable(sk_test_capi_c ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.c)
set_target_properties(sk_test_capi_c PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
sk_set_warnings(sk_test_capi_c)
target_link_libraries(sk_test_capi_c PRIVATE superkernel::c)
if(SK_SANITIZE)
  # The instrumented C++ library needs the sanitizers' C++ runtime parts
  # (UBSan's vptr and function checks), which only a C++ link brings in.
  set_target_properties(sk_test_capi_c PROPERTIES LINKER_LANGUAGE CXX)
endif()
add_test(NAME capi.c_program COMMAND sk_test_capi_c ${PROJECT_BINARY_DIR}/test-cache/capi-c)
set_tests_properties(capi.c_program PROPERTIES LABELS capi TIMEOUT 300)
find_program(SK_PYTHON3 python3)
# An instrumented library cannot be loaded into an uninstrumented python3.
if(SK_PYTHON3 AND NOT SK_SANITIZE)
  add_test(NAME capi.python_ctypes
    COMMAND ${SK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/capi/ctypes_test.py $<TARGET_FILE:superkernel_c>
            ${PROJECT_BINARY_DIR}/test-cache/capi-python)
  set_tests_properties(capi.python_ctypes PROPERTIES LABELS capi TIMEOUT 300)
endif()
