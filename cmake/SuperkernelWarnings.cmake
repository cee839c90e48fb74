# -Wall -Wextra on every target of ours (not on dependencies). Warnings become
# errors only with SK_WERROR=ON: a developer/CI option (scripts/build.sh and
# .ci/run turn it on). It is off by default so that a packager's compiler,
# newer than the ones CI runs, cannot break a release build over a new warning.
option(SK_WERROR "Treat compiler warnings as errors (developers and CI)" OFF)
# g++ 12 and 13 at -O2/-O3 report -Wrestrict on libstdc++'s own
# operator+(const char*, std::string&&) (GCC bug 105329, fixed in GCC 14):
# every `"x" + str` in a Release build would fail. Off for those versions only.
set(_sk_gcc_false_restrict
  $<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,14>,$<COMPILE_LANGUAGE:CXX>>)
function(sk_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra
    $<$<BOOL:${SK_WERROR}>:-Werror>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
    $<${_sk_gcc_false_restrict}:-Wno-restrict>)
endfunction()
