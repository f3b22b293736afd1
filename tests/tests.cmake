# Every CTest entry. hgr_test() is defined in CMakeLists.txt beside this file.

# Status and devices (foundation)
hgr_test(NAME status_unit SOURCE test_status.c)
hgr_test(NAME device_spec_unit SOURCE test_device_spec.c)
hgr_test(NAME devices_testbed SOURCE test_devices.c ARGS testbed)
hgr_test(NAME devices_context_per_device SOURCE test_devices.c ARGS context-per-device)

# Test oracle and random graphs (tests/reference.c, tests/graphgen.c)
hgr_test(NAME reference_unit SOURCE test_reference.c)

# End to end
hgr_test(NAME e2e_one_device SOURCE test_e2e.c ARGS one-device)
hgr_test(NAME e2e_pocl_pair SOURCE test_e2e.c ARGS pocl-pair)
hgr_test(NAME e2e_pocl_rusticl SOURCE test_e2e.c ARGS pocl-rusticl)
hgr_test(NAME e2e_three_platforms SOURCE test_e2e.c ARGS three-platforms)
hgr_test(NAME e2e_context_per_device SOURCE test_e2e.c ARGS context-per-device)
hgr_test(NAME e2e_many_runs SOURCE test_e2e.c ARGS many-runs)
hgr_test(NAME e2e_api_errors SOURCE test_e2e.c ARGS api-errors)

target_sources(hgr_testlib PRIVATE reference.c graphgen.c optest.c)
target_sources(hgr_testlib PRIVATE ref_linalg.c)

# Graph, params, npy
hgr_test(NAME graph_loader SOURCE test_graph.c)
hgr_test(NAME params_format SOURCE test_params.c)
hgr_test(NAME npy_format SOURCE test_npy.c)
hgr_test(NAME dtype_strings SOURCE test_tensor.c)

# A failed producer reaches the consumer as an error, across every kind of bridge
hgr_test(NAME failure_pocl_to_rusticl SOURCE test_failures.c ARGS pocl:0 rusticl:0 shared)
hgr_test(NAME failure_rusticl_to_pocl SOURCE test_failures.c ARGS rusticl:0 pocl:0 shared)
hgr_test(NAME failure_oclgrind_to_pocl SOURCE test_failures.c ARGS oclgrind:0 pocl:0 shared)
hgr_test(NAME failure_pocl_to_pocl_per_device_context SOURCE test_failures.c ARGS pocl:0 pocl:1 per-device)

# Every built-in op against the C reference, per platform (Oclgrind: with its checks)
hgr_test(NAME ops_pocl SOURCE test_ops.c ARGS pocl:0)
hgr_test(NAME ops_rusticl SOURCE test_ops.c ARGS rusticl:0)
hgr_test(NAME ops_oclgrind SOURCE test_ops.c ARGS oclgrind:0)

# Attr parsing shared by the ops
hgr_test(NAME op_attrs_unit SOURCE test_op_attrs.c)

# Op families against plain-C references (tests/optest.c), per platform; Oclgrind
# runs every kernel with its memory, race and uninitialized-value checks.
foreach(family elementwise linalg)
  hgr_test(NAME ops_${family}_pocl SOURCE test_ops_${family}.c ARGS pocl:0)
  hgr_test(NAME ops_${family}_rusticl SOURCE test_ops_${family}.c ARGS rusticl:0)
  hgr_test(NAME ops_${family}_oclgrind SOURCE test_ops_${family}.c ARGS oclgrind:0)
endforeach()

# Executor API: params, default bindings, limits, plan-only
hgr_test(NAME executor_api SOURCE test_executor_api.c)

# The hgr program, on the examples and on bad input (needs the hgr program)
if(TARGET hgr_cli)
  set(SIMPLEX_INPUTS --input A=examples/simplex_A.npy --input B=examples/simplex_B.npy --input C=examples/simplex_C.npy)
  set(DUPLEX_INPUTS --input A=examples/duplex_A.npy --input B=examples/duplex_B.npy --input C=examples/duplex_C.npy
                    --input D=examples/duplex_D.npy --input E=examples/duplex_E.npy)
  set(LARGE_INPUTS --params examples/large.params --input x_small=examples/large_x_small.npy
                   --input x_big=examples/large_x_big.npy
                   --expect 0=examples/large_expected_0.npy --expect 1=examples/large_expected_1.npy)
  hgr_cli_test(NAME cli_simplex_pocl_rusticl
    ARGS run examples/simplex.json ${SIMPLEX_INPUTS} --device 1=pocl:0 --device 4=rusticl:0
         --expect 0=examples/simplex_expected_0.npy
    PASS "cross-platform +1 copies.*matches examples/simplex_expected_0.npy")
  hgr_cli_test(NAME cli_simplex_oclgrind_pocl
    ARGS run examples/simplex.json ${SIMPLEX_INPUTS} --device 1=oclgrind:0 --device 4=pocl:1
         --expect 0=examples/simplex_expected_0.npy
    PASS "matches examples/simplex_expected_0.npy")
  hgr_cli_test(NAME cli_duplex_one_context
    ARGS run examples/duplex.json ${DUPLEX_INPUTS} --device 1=pocl:0 --device 4=pocl:1
         --expect 0=examples/duplex_expected_0.npy
    PASS "same-context +3 copies.*matches examples/duplex_expected_0.npy")
  hgr_cli_test(NAME cli_duplex_context_per_device
    ARGS run examples/duplex.json ${DUPLEX_INPUTS} --device 1=pocl:0 --device 4=pocl:1 --context-per-device
         --expect 0=examples/duplex_expected_0.npy
    PASS "cross-context +3 copies.*matches examples/duplex_expected_0.npy")
  hgr_cli_test(NAME cli_large_default_binding
    ARGS run examples/large.json ${LARGE_INPUTS} --profile --repeat 3
    PASS "3 runs: min.*device time of the last run.*matches examples/large_expected_0.npy.*matches examples/large_expected_1.npy")
  hgr_cli_test(NAME cli_large_three_platforms
    ARGS run examples/large.json ${LARGE_INPUTS} --device 1=pocl:0 --device 4=rusticl:0 --device 5=oclgrind:0
         --verbose
    PASS "mapped.*matches examples/large_expected_0.npy.*matches examples/large_expected_1.npy")
  hgr_cli_test(NAME cli_check_large ARGS check examples/large.json
    PASS "311 nodes, .* valid.*copies per run")
  hgr_cli_test(NAME cli_devices_json ARGS devices --json PASS "\"spec\": \"oclgrind:0\".*\"skipped_platforms\"")
  hgr_cli_test(NAME cli_help ARGS --help PASS "devices.*run.*check")
  hgr_cli_test(NAME cli_run_help ARGS run --help PASS "--device KEY=SPEC")
  hgr_cli_test(NAME cli_rejects_unknown_flags ARGS run examples/simplex.json --bogus EXIT 2
    PASS "unknown option '--bogus'")
  hgr_cli_test(NAME cli_names_a_missing_input
    ARGS run examples/simplex.json --input A=examples/simplex_A.npy --input C=examples/simplex_C.npy EXIT 1
    PASS "input 1 'B' is neither given with --input nor in the params")
  hgr_cli_test(NAME cli_names_an_unknown_device ARGS run examples/simplex.json ${SIMPLEX_INPUTS} --device 4=pocl:7 EXIT 1
    PASS "device binding 4=pocl:7: no device matches 'pocl:7'")
  hgr_cli_test(NAME cli_rejects_a_mismatched_input
    ARGS run examples/simplex.json --input A=examples/duplex_A.npy --input B=examples/large_x_small.npy
         --input C=examples/simplex_C.npy EXIT 1
    PASS "--input B: examples/large_x_small.npy holds float32")
  hgr_cli_test(NAME cli_reports_a_wrong_expectation
    ARGS run examples/duplex.json ${DUPLEX_INPUTS} --expect 0=examples/simplex_expected_0.npy EXIT 1
    PASS "DOES NOT MATCH")
endif()
