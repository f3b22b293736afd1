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

target_sources(hgr_testlib PRIVATE reference.c graphgen.c)

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
