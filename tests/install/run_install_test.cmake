# The install test (issue 24): tessel used from a user's own CMake project, with no environment.
#
# MODE=install  `cmake --install` of this build tree into a scratch prefix; the installed `tessel`
#               runs (--version, list); the installed targets files name no absolute path of this
#               machine; tests/install/consumer (only find_package(tessel) + target_link_libraries,
#               no CMAKE_CXX_STANDARD) builds against the prefix and runs.
# MODE=fetch    tests/install/fetch_consumer takes tessel in with FetchContent, as shared libraries
#               without LLVM (that build compiles tessel's five libraries again, at -O0: about a minute), and
#               runs; then that project is installed with CMAKE_INSTALL_LIBDIR lib/<multiarch> and
#               tests/install/consumer builds against it and runs: the shared libraries carry a
#               SOVERSION and find each other through their RUNPATH ($ORIGIN).
# Programs run with LD_LIBRARY_PATH unset: an installed tree must not need it. A failed step is a
# FATAL_ERROR naming the step (ctest judges the exit status).
cmake_minimum_required(VERSION 3.24)  # policies of this era for the script (IN_LIST)
foreach(v MODE BUILD_DIR TESSEL_SOURCE_DIR TESTS_DIR WORK_DIR BINDIR LIBDIR CXX ARCH)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_install_test.cmake: ${v} not set")
  endif()
endforeach()

# step(NAME command...): runs the command; its output (stdout and stderr) lands in step_output.
function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${name} failed (exit status ${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# run(NAME REGEX program args...): runs an installed or consumer program with LD_LIBRARY_PATH
# unset; its output must match REGEX.
function(run name regex)
  step("${name}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${ARGN})
  string(SUBSTRING "${step_output}" 0 600 head)  # `tessel list` is long
  message("${name}:\n${head}")
  if(NOT step_output MATCHES "${regex}")
    message(FATAL_ERROR "install test: ${name}: the output does not match /${regex}/")
  endif()
endfunction()

# expect_runpath(FILE RUNPATH): the ELF file's dynamic string table holds RUNPATH as one string.
function(expect_runpath file want)
  file(STRINGS "${file}" strings REGEX "^\\$ORIGIN")
  if(NOT want IN_LIST strings)
    message(FATAL_ERROR "install test: ${file} has no RUNPATH '${want}' (its $ORIGIN strings: '${strings}')")
  endif()
endfunction()

# no_absolute_paths(PREFIX): the installed tesselTargets*.cmake name libraries by target or by
# ${_IMPORT_PREFIX}, never by an absolute path, which would hold only on the machine that built them.
function(no_absolute_paths prefix)
  file(GLOB_RECURSE files "${prefix}/*/tesselTargets*.cmake")
  if(NOT files)
    message(FATAL_ERROR "install test: no tesselTargets*.cmake under ${prefix}")
  endif()
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^ *(INTERFACE|IMPORTED)_[A-Z_]+ \"")
    foreach(line IN LISTS lines)
      if(line MATCHES "[\";]/")
        message(FATAL_ERROR "install test: ${f} names an absolute path:\n${line}")
      endif()
    endforeach()
  endforeach()
endfunction()

set(generator -G Ninja -DCMAKE_CXX_COMPILER=${CXX})
# A sanitized tessel links only into a sanitized program (the flags are not usage requirements).
if(SANITIZE)
  list(APPEND generator "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})

if(MODE STREQUAL "install")
  set(prefix ${WORK_DIR}/prefix)
  step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  file(RELATIVE_PATH bin_to_lib /p/${BINDIR} /p/${LIBDIR})
  expect_runpath(${prefix}/${BINDIR}/tessel "$ORIGIN/${bin_to_lib}")
  run("installed tessel --version" "^tessel [0-9]+\\.[0-9]+\\.[0-9]+ " ${prefix}/${BINDIR}/tessel --version)
  run("installed tessel list" "\n +add +out = x \\+ y" ${prefix}/${BINDIR}/tessel list)
  no_absolute_paths(${prefix})
  step("configuring the find_package consumer" ${CMAKE_COMMAND} -S ${TESTS_DIR}/consumer -B ${WORK_DIR}/consumer
       ${generator} -DCMAKE_PREFIX_PATH=${prefix})
  step("building the find_package consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
  run("the find_package consumer" "(^|\n)ok 3\\.5 on " ${WORK_DIR}/consumer/consumer)
elseif(MODE STREQUAL "fetch")
  # A libdir below lib/ (Debian's multiarch one when known): the RUNPATHs must follow LIBDIR.
  if(ARCH)
    set(libdir lib/${ARCH})
  else()
    set(libdir lib64)
  endif()
  step("configuring the FetchContent consumer" ${CMAKE_COMMAND} -S ${TESTS_DIR}/fetch_consumer -B ${WORK_DIR}/fetch
       ${generator} -DTESSEL_SOURCE_DIR=${TESSEL_SOURCE_DIR} -DBUILD_SHARED_LIBS=ON -DTESSEL_WITH_LLVM=OFF
       -DCMAKE_INSTALL_LIBDIR=${libdir})
  if(EXISTS ${WORK_DIR}/fetch/_deps/tessel-build/samples OR EXISTS ${WORK_DIR}/fetch/_deps/tessel-build/tools
     OR EXISTS ${WORK_DIR}/fetch/_deps/tessel-build/tests)
    message(FATAL_ERROR "install test: tessel taken in with FetchContent configured its samples, tools or tests")
  endif()
  step("building the FetchContent consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/fetch)
  run("the FetchContent consumer" "(^|\n)ok 3\\.5 on " ${WORK_DIR}/fetch/consumer)
  set(prefix ${WORK_DIR}/shared_prefix)
  step("installing the FetchContent project" ${CMAKE_COMMAND} --install ${WORK_DIR}/fetch --prefix ${prefix})
  file(GLOB sonames ${prefix}/${libdir}/libtessel_jit_core.so.*.*)
  list(FILTER sonames EXCLUDE REGEX "\\.so\\.[0-9]+\\.[0-9]+\\.[0-9]+$")  # the soname link, not the file
  if(NOT sonames)
    message(FATAL_ERROR "install test: no versioned soname libtessel_jit_core.so.MAJOR.MINOR in ${prefix}/${libdir}")
  endif()
  expect_runpath(${sonames} "$ORIGIN")
  no_absolute_paths(${prefix})
  step("configuring the consumer of shared tessel" ${CMAKE_COMMAND} -S ${TESTS_DIR}/consumer
       -B ${WORK_DIR}/consumer_shared ${generator} -DCMAKE_PREFIX_PATH=${prefix})
  step("building the consumer of shared tessel" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer_shared)
  run("the consumer of shared tessel" "(^|\n)ok 3\\.5 on " ${WORK_DIR}/consumer_shared/consumer)
else()
  message(FATAL_ERROR "run_install_test.cmake: MODE '${MODE}' is neither install nor fetch")
endif()
message("PASS: install test (${MODE})")
