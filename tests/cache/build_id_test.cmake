# jit/cmake/build_id.cmake on scratch files: the id is 16 hex digits, the same for the same
# contents (in any listing order), different when one byte of one file or a file's name changes,
# and the generated file is left untouched when the id does not change (so nothing recompiles).
#   cmake -DSCRIPT=<jit/cmake/build_id.cmake> -DWORK=<scratch dir> -P build_id_test.cmake
string(RANDOM LENGTH 8 run)  # a directory of this run's own: concurrent ctest runs never share it
set(WORK "${WORK}/${run}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src/lowering")
file(WRITE "${WORK}/src/lowering/a.cpp" "int a() { return 1; }\n")
file(WRITE "${WORK}/src/lowering/b.hpp" "int a();\n")

function(build_id out_var list_text)
  file(WRITE "${WORK}/list.txt" "${list_text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${WORK}/src -DLIST=${WORK}/list.txt -DOUT=${WORK}/id.cpp
                          -P ${SCRIPT} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "build_id.cmake failed: ${rc}")
  endif()
  file(READ "${WORK}/id.cpp" text)
  if(NOT text MATCHES "kBuildId\\[\\] = \"([0-9a-f]+)\"")
    message(FATAL_ERROR "no id in:\n${text}")
  endif()
  string(LENGTH "${CMAKE_MATCH_1}" n)
  if(NOT n EQUAL 16)
    message(FATAL_ERROR "id '${CMAKE_MATCH_1}' is not 16 hex digits")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(expect what cond)
  if(NOT ${cond})
    message(FATAL_ERROR "FAIL: ${what}")
  endif()
  message(STATUS "ok: ${what}")
endfunction()

set(a "${WORK}/src/lowering/a.cpp")
set(b "${WORK}/src/lowering/b.hpp")
build_id(base "${a}\n${b}\n")
file(TIMESTAMP "${WORK}/id.cpp" t0 "%s")
build_id(swapped "${b}\n${a}\n")
string(COMPARE EQUAL "${base}" "${swapped}" same_order)
expect("the listing order does not matter" same_order)
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)
build_id(again "${a}\n${b}\n")
file(TIMESTAMP "${WORK}/id.cpp" t1 "%s")
string(COMPARE EQUAL "${t0}" "${t1}" untouched)
expect("an unchanged id leaves the generated file untouched" untouched)

file(WRITE "${a}" "int a() { return 2; }\n")  # one byte of a lowering source
build_id(edited "${a}\n${b}\n")
string(COMPARE NOTEQUAL "${base}" "${edited}" changed)
expect("one changed byte changes the id" changed)

file(WRITE "${a}" "int a() { return 1; }\n")
build_id(reverted "${a}\n${b}\n")
string(COMPARE EQUAL "${base}" "${reverted}" back)
expect("the same contents give the same id again" back)

file(RENAME "${b}" "${WORK}/src/lowering/c.hpp")
build_id(renamed "${a}\n${WORK}/src/lowering/c.hpp\n")
string(COMPARE NOTEQUAL "${base}" "${renamed}" moved)
expect("a renamed file changes the id" moved)

build_id(fewer "${a}\n")
string(COMPARE NOTEQUAL "${base}" "${fewer}" dropped)
expect("a file fewer changes the id" dropped)
file(REMOVE_RECURSE "${WORK}")
message(STATUS "PASS: build id")
