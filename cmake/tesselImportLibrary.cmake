# tessel_import_library(): a system library that ships no CMake package as an imported target.
#
# libxxhash (and libzstd under TESSEL_STATIC_LLVM) have no CMake package on Debian. Linking the
# path find_library returns would write that absolute path into the installed tesselTargets.cmake
# (static libraries carry their private dependencies in the link interface), which breaks on any
# other machine layout. Linking tessel::<name> instead puts only that name in the targets file,
# and the installed tesselConfig.cmake calls this function again to find the library where the
# user's machine has it. Used by tessel's own build and, installed, by tesselConfig.cmake.
include_guard(DIRECTORY)

# tessel_import_library(<target> VAR <cache variable> NAMES <name>...)
# Defines the UNKNOWN IMPORTED <target> when find_library finds one of NAMES (the result is
# cached in VAR, which a user may set to override). Leaves <target> undefined otherwise: the
# caller says what is missing in its own words.
function(tessel_import_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "VAR" "NAMES")
  if(TARGET ${target})
    return()
  endif()
  find_library(${arg_VAR} NAMES ${arg_NAMES})
  if(NOT ${arg_VAR})
    return()
  endif()
  add_library(${target} UNKNOWN IMPORTED)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${${arg_VAR}}")
endfunction()
