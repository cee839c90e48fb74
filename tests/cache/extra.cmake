# sk_test_cache: a helper process (multi-process single flight, SIGKILL
# during a build, key stability across processes) and a tiny shared object
# that the fake builds store and the cache dlopens.
add_executable(sk_test_cache_helper ${CMAKE_CURRENT_SOURCE_DIR}/cache/helper/cache_helper.cpp)
sk_set_warnings(sk_test_cache_helper)
target_link_libraries(sk_test_cache_helper PRIVATE superkernel::superkernel)
add_library(sk_test_cache_tiny SHARED ${CMAKE_CURRENT_SOURCE_DIR}/cache/helper/tiny.c)
add_dependencies(${t} sk_test_cache_helper sk_test_cache_tiny)
target_compile_definitions(${t} PRIVATE
  SK_TEST_CACHE_HELPER="$<TARGET_FILE:sk_test_cache_helper>"
  SK_TEST_TINY_SO="$<TARGET_FILE:sk_test_cache_tiny>")
