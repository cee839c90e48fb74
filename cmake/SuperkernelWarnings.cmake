# -Wall -Wextra -Werror on every target of ours (not on dependencies).
function(sk_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
endfunction()
