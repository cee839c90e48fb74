# The CLI tests run the built tools: build them first and tell the tests
# where they are.
add_dependencies(${t} sk-compile sk-cache)
target_compile_definitions(${t} PRIVATE
  SK_COMPILE_BIN="$<TARGET_FILE:sk-compile>"
  SK_CACHE_BIN="$<TARGET_FILE:sk-cache>")
