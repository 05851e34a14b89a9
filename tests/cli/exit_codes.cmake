# Exit codes of input and environment errors (issue 23 #12, #15): exit 1 with one line naming what was wrong.
# Included by tests/cli/CMakeLists.txt (TESSEL_BIN and tessel_cli_test are defined there). The
# plugin cases (a kernel whose own code throws) are in tests/CMakeLists.txt, next to the plugins.

# Sizes past i32 offsets: refused with the limit, before anything is allocated.
tessel_cli_expect(cli_exit_size_over_i32 1 "--size: Value 2147483648 not in range 1 to 2147483647"
                  run add --interpret --size 2147483648)
tessel_cli_expect(cli_exit_rows_over_i32 1
  "tessel: error: 100000 rows of stride 100000 do not fit i32 offsets: they span 10000000000 elements, at most 2147483647"
  run softmax --interpret --rows 100000 --cols 100000)
tessel_cli_expect(cli_exit_matmul_over_i32 1
  "tessel: error: a 100000x100000x100000 matmul does not fit i32 offsets: .* at most 2147483647"
  run matmul --interpret --rows 100000 --cols 100000)
# Each matrix fits; the three of the batch in one allocation do not (checked before they are made).
tessel_cli_expect(cli_exit_batched_over_i32 1
  "tessel: error: 3 batched 30000x30000x30000 matmuls do not fit i32 offsets: 2700000000 elements per operand"
  run batched_matmul --interpret --rows 30000 --cols 30000)

# Host memory that cannot be had is the machine's limit, not a tessel bug: under a 4 GB address
# space limit --size 2147483647 (8 GB per input) fails its first allocation. Skipped (77) where the
# limit cannot be set or tessel cannot start under it (a sanitizer build reserves more).
tessel_cli_test(NAME cli_exit_host_memory CODE 1 SKIP_CODE 77 TIMEOUT 120
  MATCH "tessel: error: cannot allocate 8589934588 bytes for 2147483647 random inputs: out of host memory"
  NOT_MATCH "internal error"
  COMMAND sh -c "ulimit -v 4000000 || exit 77; \"$0\" --version >/dev/null 2>&1 || exit 77; exec \"$0\" run add --interpret --size 2147483647"
          ${TESSEL_BIN})
# Any other host allocation that fails (here a std::vector of the softmax sample) is reported the
# same way: exit 1, the machine's memory, not "internal error: std::bad_alloc".
tessel_cli_test(NAME cli_exit_host_memory_general CODE 1 SKIP_CODE 77 TIMEOUT 120
  MATCH "tessel: error: out of host memory \\(an allocation failed\\); expected a problem size that fits"
  NOT_MATCH "internal error"
  COMMAND sh -c "ulimit -v 4000000 || exit 77; \"$0\" --version >/dev/null 2>&1 || exit 77; exec \"$0\" run softmax --interpret --rows 20000 --cols 20000"
          ${TESSEL_BIN})

# Unwritable outputs name the path: a directory that cannot be made (/proc refuses), and a path
# under a regular file (the tessel binary itself).
tessel_cli_expect(cli_exit_report_unwritable 1
  "tessel: error: cannot write '/proc/nonexistent/x.svg': cannot create its directory '/proc/nonexistent': "
  report /proc/nonexistent/x.svg --from ${CMAKE_CURRENT_SOURCE_DIR}/tune_results.json)
tessel_cli_expect(cli_exit_report_under_file 1 "tessel: error: cannot write '[^']*/tessel/x.svg': .*Not a directory"
  report ${TESSEL_BIN}/x.svg --from ${CMAKE_CURRENT_SOURCE_DIR}/tune_results.json)
# --one specialises an integer parameter; a pointer or a float cannot be a unit stride.
tessel_cli_expect(cli_exit_one_pointer 1
  "tessel: error: --one x: parameter 'x' of kernel 'add' is ptr<f32>; --one specialises an integer parameter"
  compile add --one x --emit tir)
tessel_cli_expect(cli_exit_one_float 1 "tessel: error: --one c: parameter 'c' of kernel 'add_scalar' is f32; --one"
  compile add_scalar --one c --emit tir)
tessel_cli_expect(cli_exit_one_dump_pointer 1 "tessel: error: --one y: parameter 'y' of kernel 'add' is ptr<f32>"
  dump add ${CMAKE_CURRENT_BINARY_DIR}/exit_dump --one y)
tessel_cli_expect(cli_exit_one_integer 0 "kernel @add\\(.*%n: i32 \\{equal1\\}\\)" compile add --one n --emit tir)

# A damaged tuning database is the user's file: exit 1 naming it and what is wrong. bench only
# reads the database, so the fixtures are never written.
tessel_cli_test(NAME cli_exit_tune_db_not_json CODE 1
  ENV TESSEL_TUNE_DB=${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh
  MATCH "tessel: error: tuning database [^ ]*expect_exit.sh is malformed: .*parse error.*expected the JSON object that tessel tune writes"
  COMMAND ${TESSEL_BIN} bench add --sizes 1000 --interpret --host-timer)
tessel_cli_expect(cli_exit_tune_db_schema 1
  "tessel: error: tuning database [^ ]*tune_results.json is malformed: .*'format'.*expected the JSON object"
  bench add --sizes 1000 --interpret --host-timer --db ${CMAKE_CURRENT_SOURCE_DIR}/tune_results.json)
# A tuning database that cannot be saved (its directory cannot be made) after a host-timed tune.
tessel_cli_expect(cli_exit_tune_db_unwritable 1
  "tessel: error: tuning database /proc/nonexistent/t.json: .*cannot create directories.*expected a path in a writable directory"
  tune add --sizes 1000 --budget 0.05 --interpret --host-timer --db /proc/nonexistent/t.json)

if(TARGET tessel::lowering)
  set(exit_bundle ${CMAKE_CURRENT_BINARY_DIR}/exit_bundle)
  tessel_cli_expect(cli_exit_export_out_unwritable 1
    "tessel: error: export: cannot create directories: .*\\[/proc/nonexistent\\] \\(expected --out"
    export add --no-cubin --arch sm_80 --out /proc/nonexistent/b)
  tessel_cli_expect(cli_exit_export_out_under_file 1 "tessel: error: export: .*Not a directory \\[[^]]*/tessel\\]"
    export add --no-cubin --arch sm_80 --out ${TESSEL_BIN}/b)
  tessel_cli_expect(cli_exit_export_pack_unwritable 1
    "tessel: error: export: cannot write /proc/nonexistent/p.tsb: No such file or directory \\(expected --out, --pack"
    export add --no-cubin --arch sm_80 --out ${exit_bundle}_pack --pack /proc/nonexistent/p.tsb)
  tessel_cli_expect(cli_exit_export_pack_under_file 1 "tessel: error: export: cannot write [^ ]*/tessel/p.tsb: Not a directory"
    export add --no-cubin --arch sm_80 --out ${exit_bundle}_pack2 --pack ${TESSEL_BIN}/p.tsb)
  tessel_cli_expect(cli_exit_export_header_unwritable 1
    "tessel: error: export: cannot create directories: .*\\[/proc/nonexistent\\] \\(expected --out, --header"
    export add --no-cubin --arch sm_80 --out ${exit_bundle}_header --header /proc/nonexistent/h.hpp)
  # A pure compile to PTX needs no driver: no "CUDA driver unavailable" notice on a machine without
  # one, even at TESSEL_LOG=info (the level that shows it).
  tessel_cli_test(NAME cli_exit_ptx_no_driver_notice CODE 0 MATCH "\\.visible \\.entry add_BLOCK1024_w4_s1\\("
    NOT_MATCH "CUDA driver unavailable" ENV TESSEL_LOG=info COMMAND ${TESSEL_BIN} compile add --emit ptx)
endif()

# --device N past the devices there are: exit 1 naming how many there are (on the interpreter: 1).
tessel_cli_expect(cli_exit_no_such_device 1
  "tessel: error: --device 3: no such device \\(Device::get\\(3\\): there (is|are) [0-9]+ devices? "
  run add --interpret --device 3 --size 1000)
tessel_cli_expect(cli_exit_no_such_device_tune 1 "tessel: error: --device 7: no such device"
  tune add --sizes 1000 --budget 0.05 --interpret --host-timer --device 7)
