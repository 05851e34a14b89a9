# tessel_cli_test(): a CLI test that asserts the exit status and the output (through expect_exit.sh).
include_guard(GLOBAL)

# tessel_cli_test(NAME name CODE status MATCH regex [NOT_MATCH regex] [SKIP_CODE code]
#                 [ENV NAME=VALUE...] [TIMEOUT seconds] COMMAND command args...)
# CODE is checked exactly (0 success, 1 user error, 2 internal error, 3 verification failed);
# MATCH is searched in stdout and stderr together, '.' spanning lines (expect_exit.sh). Every
# test runs with its own emptied TESSEL_CACHE_DIR (and the tuning database in it), never the
# user's cache. PASS_REGULAR_EXPRESSION is not set: it would make ctest ignore the status.
function(tessel_cli_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;CODE;MATCH;NOT_MATCH;SKIP_CODE;TIMEOUT" "ENV;COMMAND")
  if(NOT arg_NAME OR "${arg_CODE}" STREQUAL "" OR NOT DEFINED arg_MATCH OR NOT arg_COMMAND)
    message(FATAL_ERROR "tessel_cli_test: NAME, CODE, MATCH and COMMAND are required")
  endif()
  set(opts -c ${CMAKE_CURRENT_BINARY_DIR}/scratch/${arg_NAME})
  foreach(e IN LISTS arg_ENV)
    list(APPEND opts -e "${e}")
  endforeach()
  if(DEFINED arg_NOT_MATCH)
    list(APPEND opts -n "${arg_NOT_MATCH}")
  endif()
  if(DEFINED arg_SKIP_CODE)
    list(APPEND opts -s ${arg_SKIP_CODE})
  endif()
  add_test(NAME ${arg_NAME} COMMAND sh ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/expect_exit.sh ${opts} ${arg_CODE} "${arg_MATCH}" ${arg_COMMAND})
  if(DEFINED arg_SKIP_CODE)
    set_tests_properties(${arg_NAME} PROPERTIES SKIP_RETURN_CODE ${arg_SKIP_CODE})
  endif()
  if(DEFINED arg_TIMEOUT)
    set_tests_properties(${arg_NAME} PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()

# Shorthand: tessel_cli_expect(name status regex tessel-args...) runs the tessel binary.
function(tessel_cli_expect name code regex)
  tessel_cli_test(NAME ${name} CODE ${code} MATCH "${regex}" COMMAND $<TARGET_FILE:tessel> ${ARGN})
endfunction()
