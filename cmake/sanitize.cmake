# TESSEL_SANITIZE: build the product (libraries, samples, the CLI) under the named compiler
# sanitizers, e.g. -DTESSEL_SANITIZE=address,undefined. Any finding aborts the process
# (-fno-sanitize-recover), so a sanitizer report fails the test that made it. Used by
# scripts/test-sanitize.sh (CI) and by hand; docs/testing.md says how.
# Test code (tests/: the doctest executables, tutorials, test plugins) is compiled without the
# instrumentation and linked with the sanitizers' runtimes (tessel_sanitize_exempt below): every
# call it makes into tessel runs instrumented code, and the build takes about a third less time
# (instrumented doctest code compiles three times slower than plain).
set(TESSEL_SANITIZE "" CACHE STRING
    "Comma-separated compiler sanitizers for the product: address, undefined, leak, thread")
set(TESSEL_SANITIZE_FLAGS "")
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
  set(TESSEL_SANITIZE_FLAGS -fsanitize=${TESSEL_SANITIZE} -fno-sanitize-recover=all)
  add_compile_options(${TESSEL_SANITIZE_FLAGS} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
  message(STATUS "tessel: building the product with -fsanitize=${TESSEL_SANITIZE} "
                 "(tests/ linked with its runtime, not instrumented)")
endif()

# Called in a directory (tests/): its targets, and those of the directories it adds
# after the call, compile without the sanitizer instrumentation and still link its runtime.
# TESSEL_SANITIZE_ADDRESS is defined for them when AddressSanitizer is on, so code that must know
# (tests/common/child_process.hpp: no address-space limit under ASan) still can.
function(tessel_sanitize_exempt)
  if(TESSEL_SANITIZE_FLAGS)
    get_property(opts DIRECTORY PROPERTY COMPILE_OPTIONS)
    list(REMOVE_ITEM opts ${TESSEL_SANITIZE_FLAGS})
    set_property(DIRECTORY PROPERTY COMPILE_OPTIONS ${opts})
    if("address" IN_LIST _tessel_sanitizers)
      add_compile_definitions(TESSEL_SANITIZE_ADDRESS=1)
    endif()
  endif()
endfunction()

# Called in a directory whose code is heavy to compile and light to run (samples/: kernels traced
# once and host references over small shapes; tools/tessel: the CLI's option parsing and reports):
# under the sanitizers it compiles at -O0, which halves its instrumented build (measured: 37 s ->
# 20 s for samples/src/reduction_samples.cpp) while the libraries it calls keep the build's -O1.
function(tessel_sanitize_unoptimised)
  if(TESSEL_SANITIZE_FLAGS)
    add_compile_options(-O0)
  endif()
endfunction()
