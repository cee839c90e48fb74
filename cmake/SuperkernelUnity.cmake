# Unity builds for our own targets (SK_UNITY_BUILD, on by default).
# Why: most of a file's compile time here is parsing and instantiating the same
# nlohmann-json, fmt, spdlog and gtest code; a unity batch does it once. Built
# file by file, that was the largest part of both of CI's full builds.
# The cost: file-local names of the files in one batch must differ. The
# library batches by folder (one pipeline stage each, whose files already share
# their conventions); other targets by 8 files. -DSK_UNITY_BUILD=OFF builds
# file by file (to find which file a diagnostic belongs to, or to check that
# each file stands alone).
option(SK_UNITY_BUILD "Build the library, runtime, tools and test executables as unity builds" ON)

# sk_unity_build(<target> [BY_FOLDER])
function(sk_unity_build target)
  if(NOT SK_UNITY_BUILD)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "BY_FOLDER" "" "")
  if(NOT arg_BY_FOLDER)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  get_target_property(_sources ${target} SOURCES)
  foreach(_src IN LISTS _sources)
    cmake_path(ABSOLUTE_PATH _src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    cmake_path(RELATIVE_PATH _src BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _rel)
    cmake_path(GET _rel PARENT_PATH _group)
    string(REPLACE "/" "_" _group "${_group}")
    set_source_files_properties(${_src} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${_group}")
  endforeach()
endfunction()
