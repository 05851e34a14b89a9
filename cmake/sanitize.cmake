# TESSEL_SANITIZE: build everything (libraries, tools, tests, plugins) under the named compiler
# sanitizers, e.g. -DTESSEL_SANITIZE=address,undefined. Any finding aborts the process
# (-fno-sanitize-recover), so a sanitizer report fails the test that made it. Used by
# scripts/test-sanitize.sh (CI) and by hand; docs/testing.md says how.
set(TESSEL_SANITIZE "" CACHE STRING
    "Comma-separated compiler sanitizers for the whole build: address, undefined, leak, thread")
if(TESSEL_SANITIZE)
  string(REPLACE "," ";" _tessel_sanitizers "${TESSEL_SANITIZE}")
  foreach(s IN LISTS _tessel_sanitizers)
    if(NOT s MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "TESSEL_SANITIZE: unknown sanitizer '${s}' "
                          "(expected a comma-separated list of address, undefined, leak, thread)")
    endif()
  endforeach()
  if("address" IN_LIST _tessel_sanitizers AND "thread" IN_LIST _tessel_sanitizers)
    message(FATAL_ERROR "TESSEL_SANITIZE: address and thread cannot be combined")
  endif()
  add_compile_options(-fsanitize=${TESSEL_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
  message(STATUS "tessel: building with -fsanitize=${TESSEL_SANITIZE}")
endif()
