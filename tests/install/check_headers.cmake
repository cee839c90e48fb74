# Public headers include only the C++ standard library, C/POSIX system
# headers and superkernel/ headers: a consumer of the installed package must
# not need any of the library's dependencies (nlohmann-json, spdlog, fmt,
# OpenSSL, LLVM, ...) to compile against it.
#
# An allowlist, not a list of known dependencies, so a new third-party
# include is caught too. Fails naming every offending file:line.
#
#   cmake -DHEADER_DIRS="<dir>;<dir>" [-DPACKAGE_DIR=<prefix>/lib] -P check_headers.cmake
#   include(check_headers.cmake) with the same variables set (the install test)
#
# With PACKAGE_DIR (an installed libdir), the installed CMake package and
# pkg-config file are checked as well: nothing there may require
# nlohmann-json (header-only and private, so never needed by a consumer),
# and superkernel.pc's public Requires: names no package.

# C and POSIX headers a public header may use (C++ standard headers are the
# bare names: <string>, <cstdint>, ...).
set(_sk_allowed_c_headers
  assert.h errno.h inttypes.h limits.h stdalign.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h
  pthread.h unistd.h fcntl.h sys/types.h sys/stat.h sys/time.h)

function(sk_check_public_headers dirs out_problems)
  set(problems "")
  foreach(dir IN LISTS dirs)
    if(NOT IS_DIRECTORY "${dir}")
      list(APPEND problems "${dir}: not a directory")
      continue()
    endif()
    file(GLOB_RECURSE headers LIST_DIRECTORIES false "${dir}/*.h" "${dir}/*.hpp" "${dir}/*.hh" "${dir}/*.inc")
    if(NOT headers)
      list(APPEND problems "${dir}: no headers found")
    endif()
    foreach(h IN LISTS headers)
      file(READ "${h}" text)
      # One list element per line: characters with a meaning in CMake lists
      # cannot occur in an include we accept, so they are neutralised.
      foreach(c ";" "[" "]" "\\")
        string(REPLACE "${c}" "_" text "${text}")
      endforeach()
      string(REPLACE "\n" ";" lines "${text}")
      set(n 0)
      foreach(line IN LISTS lines)
        math(EXPR n "${n} + 1")
        if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]*)[>\"]")
          continue()
        endif()
        set(delim "${CMAKE_MATCH_1}")
        set(name "${CMAKE_MATCH_2}")
        list(FIND _sk_allowed_c_headers "${name}" i)
        if(name MATCHES "^superkernel/" OR (delim STREQUAL "<" AND (name MATCHES "^[a-z_0-9]+$" OR i GREATER -1)))
          continue()
        endif()
        string(STRIP "${line}" line)
        list(APPEND problems "${h}:${n}: ${line}")
      endforeach()
    endforeach()
  endforeach()
  set(${out_problems} "${problems}" PARENT_SCOPE)
endfunction()

function(sk_check_installed_package libdir out_problems)
  set(problems "")
  file(GLOB files "${libdir}/cmake/superkernel/*.cmake" "${libdir}/pkgconfig/superkernel.pc")
  if(NOT files)
    list(APPEND problems "${libdir}: no installed superkernel CMake package or superkernel.pc")
  endif()
  foreach(f IN LISTS files)
    file(STRINGS "${f}" hits REGEX "^[^#]*nlohmann")
    foreach(l IN LISTS hits)
      list(APPEND problems "${f}: requires nlohmann-json: ${l}")
    endforeach()
    if(f MATCHES "\\.pc$")
      file(STRINGS "${f}" req REGEX "^Requires:[ \t]*[^ \t]")
      foreach(l IN LISTS req)
        list(APPEND problems "${f}: public Requires: (consumers would need these packages): ${l}")
      endforeach()
    endif()
  endforeach()
  set(${out_problems} "${problems}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED HEADER_DIRS)
  message(FATAL_ERROR "check_headers.cmake: HEADER_DIRS not set")
endif()
sk_check_public_headers("${HEADER_DIRS}" _sk_problems)
if(DEFINED PACKAGE_DIR)
  sk_check_installed_package("${PACKAGE_DIR}" _sk_pkg_problems)
  list(APPEND _sk_problems ${_sk_pkg_problems})
endif()
if(_sk_problems)
  list(JOIN _sk_problems "\n  " _sk_text)
  message(FATAL_ERROR "public headers / installed package depend on third-party packages (keep them private to "
    "libsuperkernel: JSON as text, see include/superkernel/cache/Cache.h):\n  ${_sk_text}")
endif()
message(STATUS "public headers include only the standard library, C/POSIX and superkernel/ headers: ${HEADER_DIRS}")
