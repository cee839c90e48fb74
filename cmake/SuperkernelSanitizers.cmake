# SK_SANITIZE="address;undefined" or "thread": applied to everything we build.
if(SK_SANITIZE)
  list(JOIN SK_SANITIZE "," _sk_san)
  add_compile_options(-fsanitize=${_sk_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_sk_san})
  message(STATUS "superkernel: sanitizers ${_sk_san}")
endif()
