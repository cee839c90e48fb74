# sk_test_driver: a small ELF shared object whose truncated and corrupted
# copies the symbol-size reader must reject without crashing (the test
# executable itself is megabytes, and hundreds of parses of it took minutes
# under ASan).
add_library(sk_test_driver_elf SHARED ${CMAKE_CURRENT_SOURCE_DIR}/driver/data/elf_probe.c)
add_dependencies(${t} sk_test_driver_elf)
target_compile_definitions(${t} PRIVATE SK_TEST_ELF_PROBE="$<TARGET_FILE:sk_test_driver_elf>")
