# FindHiredis: the hiredis C client (Debian: libhiredis-dev), for the remote
# cache tier. Defines the imported target Hiredis::hiredis. pkg-config first,
# then a plain header/library search. hiredis is a PRIVATE dependency of
# libsuperkernel: nothing in include/superkernel/ includes its headers.
# Installed next to superkernelConfig.cmake so a static libsuperkernel's
# consumers can resolve the link-only dependency.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_HIREDIS QUIET hiredis)
endif()
find_path(Hiredis_INCLUDE_DIR NAMES hiredis/hiredis.h
  HINTS ${PC_HIREDIS_INCLUDEDIR} ${PC_HIREDIS_INCLUDE_DIRS}/..)
find_library(Hiredis_LIBRARY NAMES hiredis HINTS ${PC_HIREDIS_LIBDIR} ${PC_HIREDIS_LIBRARY_DIRS})
if(Hiredis_INCLUDE_DIR AND EXISTS "${Hiredis_INCLUDE_DIR}/hiredis/hiredis.h")
  file(STRINGS "${Hiredis_INCLUDE_DIR}/hiredis/hiredis.h" _hr_ver REGEX "^#define HIREDIS_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" _hr_major "${_hr_ver}")
  string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" _hr_minor "${_hr_ver}")
  string(REGEX REPLACE ".*PATCH ([0-9]+).*" "\\1" _hr_patch "${_hr_ver}")
  set(Hiredis_VERSION "${_hr_major}.${_hr_minor}.${_hr_patch}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hiredis
  REQUIRED_VARS Hiredis_LIBRARY Hiredis_INCLUDE_DIR
  VERSION_VAR Hiredis_VERSION)
if(Hiredis_FOUND AND NOT TARGET Hiredis::hiredis)
  add_library(Hiredis::hiredis UNKNOWN IMPORTED)
  set_target_properties(Hiredis::hiredis PROPERTIES
    IMPORTED_LOCATION "${Hiredis_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Hiredis_INCLUDE_DIR}")
endif()
mark_as_advanced(Hiredis_INCLUDE_DIR Hiredis_LIBRARY)
