# ctest driver: install the build tree into a scratch prefix, move the prefix
# (nothing may depend on where it was installed), then, with the source and
# build trees hidden (a private mount namespace with empty tmpfs over them):
#   - a consumer with project(app CXX) built through find_package, and one
#     built through pkg-config, each JIT-compile and run a builtin kernel;
#   - the installed sk-compile compiles and runs an op list;
#   - sk-compile copied away from its data fails with an error that lists the
#     directories searched and names SK_DATA_DIR.
# The installed headers include no third-party header and the package
# requires no nlohmann-json (check_headers.cmake); the consumers are built
# with nlohmann-json's CMake package disabled and its headers replaced by
# ones that #error, which proves they do not need it.
foreach(v BUILD_DIR SOURCE_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_install_test.cmake: ${v} not set")
  endif()
endforeach()
# Outside both trees, so that hiding them does not hide the test itself.
string(RANDOM LENGTH 8 tag)
set(tmp "$ENV{TMPDIR}")
if(NOT tmp)
  set(tmp /tmp)
endif()
set(work "${tmp}/sk-install-test-${tag}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_out "${out}${err}" PARENT_SCOPE)
endfunction()

run_checked("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${work}/installed")
file(RENAME "${work}/installed" "${work}/prefix")
set(prefix "${work}/prefix")

set(HEADER_DIRS "${prefix}/include")
set(PACKAGE_DIR "${prefix}/lib")
include("${CMAKE_CURRENT_LIST_DIR}/check_headers.cmake")
# Found before the system's copy (-I precedes the system directories).
foreach(h nlohmann/json.hpp nlohmann/json_fwd.hpp)
  file(WRITE "${work}/poison/${h}"
    "#error \"${h} reached from a superkernel consumer: nlohmann-json must stay private to libsuperkernel\"\n")
endforeach()

# Hiding: probe for unprivileged mount namespaces (unshare -rm); without them
# the test still runs from the moved prefix and says so.
set(hide "")
execute_process(COMMAND unshare -rm true RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
  # An empty tmpfs over each tree (one mount when the build tree is inside
  # the source tree).
  set(hidden "${SOURCE_DIR}")
  file(RELATIVE_PATH rel "${SOURCE_DIR}" "${BUILD_DIR}")
  if(rel MATCHES "^\\.\\.")
    list(APPEND hidden "${BUILD_DIR}")
  endif()
  file(WRITE "${work}/hide.sh" [=[
# hide.sh DIR... -- COMMAND...: mount an empty tmpfs over each DIR, then exec.
while [ "$1" != -- ]; do
  mount -t tmpfs none "$1" || exit 99
  shift
done
shift
exec "$@"
]=])
  set(hide unshare -rm sh "${work}/hide.sh" ${hidden} --)
  message(STATUS "source tree ${SOURCE_DIR} and build tree ${BUILD_DIR} hidden while the install runs")
else()
  message(STATUS "unshare -rm unavailable: running from the moved prefix with the source tree visible")
endif()

set(ENV{SK_CACHE_DIR} "${work}/cache")
set(ENV{CONSUMER_CACHE_DIR} "${work}/cache")
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
foreach(mode find_package pkgconfig)
  if(mode STREQUAL pkgconfig)
    set(via ON)
  else()
    set(via OFF)
  endif()
  run_checked("configuring the ${mode} consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer"
    -B "${work}/consumer-${mode}" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" -DSK_VIA_PKGCONFIG=${via}
    -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
    "-DSK_GENERATE_LOOP_SOURCE=${SOURCE_DIR}/examples/api/generate_loop.cpp"
    "-DCMAKE_CXX_FLAGS=${SAN_FLAGS} -I${work}/poison" "-DCMAKE_EXE_LINKER_FLAGS=${SAN_FLAGS}"
    # The library's own compiler: a sanitizer runtime (or a C++ ABI detail)
    # of one compiler does not link with the other's.
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
  run_checked("building the ${mode} consumer" ${CMAKE_COMMAND} --build "${work}/consumer-${mode}")
  run_checked("running the ${mode} consumer" ${hide} "${work}/consumer-${mode}/consumer")
  if(NOT last_out MATCHES "consumer ok")
    message(FATAL_ERROR "${mode} consumer: ${last_out}")
  endif()
  message(STATUS "${mode}: ${last_out}")
  if(mode STREQUAL find_package)
    run_checked("running the installed generation loop" ${hide} "${work}/consumer-${mode}/generate_loop")
    if(NOT last_out MATCHES "generate_loop ok")
      message(FATAL_ERROR "generate_loop from the installed package: ${last_out}")
    endif()
  endif()
endforeach()

# The installed tool on an op list copied out of the source tree.
file(COPY "${SOURCE_DIR}/examples/seed/" DESTINATION "${work}/oplist")
run_checked("installed sk-compile --run" ${hide} "${prefix}/bin/sk-compile" --run "${work}/oplist/seed.json"
  --cache-dir "${work}/cache")
if(NOT last_out MATCHES "identical")
  message(FATAL_ERROR "installed sk-compile: ${last_out}")
endif()

# The installed Python package from the moved prefix (trees hidden): it finds
# libsuperkernel_c.so relative to itself and superkernel.torch compiles and
# runs. Debian's python3 sees python3-torch (scripts/setup.sh installs it);
# an instrumented library cannot be loaded into an uninstrumented python3.
if(EXISTS /usr/bin/python3 AND NOT SAN_FLAGS)
  file(WRITE "${work}/py_check.py" "
import sys, torch, superkernel, superkernel.torch as skt
assert superkernel.__file__.startswith(sys.argv[1]), superkernel.__file__
f = lambda x: torch.nn.functional.silu(x) * 2.0
x = torch.randn(64)
cm = skt.compile(f, (x,), cache_dir=sys.argv[2], workers=1)
torch.testing.assert_close(cm(x), f(x), rtol=1e-4, atol=1e-5)
print('python ok', cm.summary()['superkernels'])
")
  run_checked("the installed Python package" ${hide} ${CMAKE_COMMAND} -E env
    "PYTHONPATH=${prefix}/lib/python3/dist-packages" PYTHONDONTWRITEBYTECODE=1
    /usr/bin/python3 "${work}/py_check.py" "${prefix}" "${work}/cache-py")
  if(NOT last_out MATCHES "python ok 1")
    message(FATAL_ERROR "installed Python package: ${last_out}")
  endif()
endif()

# Away from its data: one clear error naming what was searched and the override.
file(MAKE_DIRECTORY "${work}/lonely/bin")
file(COPY "${prefix}/bin/sk-compile" DESTINATION "${work}/lonely/bin")
file(COPY "${prefix}/lib" DESTINATION "${work}/lonely")
execute_process(COMMAND ${hide} "${work}/lonely/bin/sk-compile" "${work}/oplist/seed.json" --cache-dir "${work}/cache"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "searched:" OR NOT err MATCHES "SK_DATA_DIR" OR NOT err MATCHES "${work}/lonely/share/superkernel")
  message(FATAL_ERROR "sk-compile without its data: expected an error listing the searched directories (${rc}):\n${out}${err}")
endif()
file(REMOVE_RECURSE "${work}")
