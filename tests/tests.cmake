# Every CTest entry. hgr_test() is defined in CMakeLists.txt beside this file.

# Status and devices (foundation)
# The runtime's calls go one way, layer by layer (docs/architecture.md).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME runtime_calls_go_one_way COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/layers.py"
                                               "${PROJECT_SOURCE_DIR}")
# Every runtime allocation goes through an allocator (include/hgr/allocator.h).
add_test(NAME runtime_allocates_through_an_allocator COMMAND "${Python3_EXECUTABLE}"
                                                             "${PROJECT_SOURCE_DIR}/scripts/check_alloc.py"
                                                             "${PROJECT_SOURCE_DIR}")
hgr_test(NAME status_unit SOURCE test_status.c)
hgr_test(NAME device_spec_unit SOURCE test_device_spec.c)
hgr_test(NAME devices_testbed SOURCE test_devices.c ARGS testbed)
hgr_test(NAME devices_context_per_device SOURCE test_devices.c ARGS context-per-device)
# Skipped (77), not passed, on a machine where Clover is not registered
hgr_test(NAME devices_clover_is_skipped_with_a_reason SOURCE test_devices.c ARGS clover)

# Test oracle and random graphs (tests/reference.c, tests/graphgen.c)
hgr_test(NAME reference_unit SOURCE test_reference.c)

# End to end
hgr_test(NAME e2e_one_device SOURCE test_e2e.c ARGS one-device SHIM)
hgr_test(NAME e2e_pocl_pair SOURCE test_e2e.c ARGS pocl-pair SHIM)
hgr_test(NAME e2e_pocl_rusticl SOURCE test_e2e.c ARGS pocl-rusticl SHIM)
hgr_test(NAME e2e_three_platforms SOURCE test_e2e.c ARGS three-platforms SHIM)
hgr_test(NAME e2e_context_per_device SOURCE test_e2e.c ARGS context-per-device SHIM)
hgr_test(NAME e2e_many_runs SOURCE test_e2e.c ARGS many-runs SHIM)
hgr_test(NAME e2e_api_errors SOURCE test_e2e.c ARGS api-errors SHIM)
# Copies across contexts, every path, both ways (runtime/exec/transfer.c)
hgr_test(NAME transfer_pocl_rusticl SOURCE test_transfer.c ARGS pocl:0 rusticl:0)
hgr_test(NAME transfer_context_per_device SOURCE test_transfer.c ARGS pocl:0 pocl:1 context-per-device)

target_sources(hgr_testlib PRIVATE reference.c graphgen.c graph_check.c optest.c pass_check.c)
target_sources(hgr_testlib PRIVATE ref_elementwise.c ref_layout.c ref_norm.c ref_attention.c ref_conv.c ref_linalg.c ref_resize.c
                                   ref_rnn.c ref_nms.c ref_compact.c ref_index.c ref_quantize.c)

# Graph, params, npy
hgr_test(NAME graph_loader SOURCE test_graph.c)
hgr_test(NAME graph_edit SOURCE test_graph_edit.c)
hgr_test(NAME graph_write SOURCE test_graph_write.c ARGS ${PROJECT_SOURCE_DIR}/examples ${HGR_TEST_DATA_DIR}/graphs)
hgr_test(NAME builder_unit SOURCE test_builder.c ARGS unit)
hgr_test(NAME builder_pocl SOURCE test_builder.c ARGS run)
hgr_test(NAME fuse_unit SOURCE test_fuse.c ARGS unit)
hgr_test(NAME fuse_pocl SOURCE test_fuse.c ARGS run pocl:0)
hgr_test(NAME fuse_three_platforms SOURCE test_fuse.c ARGS run pocl:0 rusticl:0 oclgrind:0)
# The graph passes (runtime/passes/): the conv epilogue on builder graphs, the
# pipeline's switches; fused builder and TVM graphs against unfused ones
hgr_test(NAME passes_unit SOURCE test_passes.c ARGS unit)
hgr_test(NAME passes_pocl SOURCE test_passes.c ARGS run pocl:0)
hgr_test(NAME passes_three_platforms SOURCE test_passes.c ARGS run pocl:0 rusticl:0 oclgrind:0)
hgr_test(NAME fuse_attention_unit SOURCE test_fuse_attention.c ARGS unit)
hgr_test(NAME fuse_attention_three_platforms SOURCE test_fuse_attention.c ARGS run pocl:0 rusticl:0 oclgrind:0)
# The GEMM epilogue pass: matmul/dense/batch_matmul + bias add + activation, the
# near misses, the pipeline's order; fused against unfused on each platform
hgr_test(NAME fuse_gemm_epilogue_unit SOURCE test_fuse_gemm_epilogue.c ARGS unit)
hgr_test(NAME fuse_gemm_epilogue_three_platforms SOURCE test_fuse_gemm_epilogue.c ARGS run pocl:0 rusticl:0 oclgrind:0)
# The output layout pass: the heads' reshapes and transposes after GEMMs and attention,
# the near misses, the switch and counts; fused against unfused on each platform
hgr_test(NAME fuse_out_layout_unit SOURCE test_fuse_out_layout.c ARGS unit)
hgr_test(NAME fuse_out_layout_three_platforms SOURCE test_fuse_out_layout.c ARGS run pocl:0 rusticl:0 oclgrind:0)
# The skip layer norm pass: a residual add into the layer_norm after it, the near
# misses, the switch and counts; fused against unfused on each platform
hgr_test(NAME fuse_skip_norm_unit SOURCE test_fuse_skip_norm.c ARGS unit)
hgr_test(NAME fuse_skip_norm_three_platforms SOURCE test_fuse_skip_norm.c ARGS run pocl:0 rusticl:0 oclgrind:0)
hgr_test(NAME fuse_sibling_gemms_unit SOURCE test_fuse_sibling_gemms.c ARGS unit)
hgr_test(NAME fuse_sibling_gemms_three_platforms SOURCE test_fuse_sibling_gemms.c ARGS run pocl:0 rusticl:0 oclgrind:0)
# The GEMM weight packing pass: panels of 32 columns, shared packs, near misses;
# packed against unpacked on each platform
hgr_test(NAME pack_gemm_weights_unit SOURCE test_pack_gemm_weights.c ARGS unit)
hgr_test(NAME pack_gemm_weights_three_platforms SOURCE test_pack_gemm_weights.c ARGS run pocl:0 rusticl:0 oclgrind:0)

# Placement's cost-based policies (issue 14): AUTO and STAGES on hand-made cost
# models (no devices)
hgr_test(NAME schedule_unit SOURCE test_schedule.c)
# The cost model: calibration (profiling, or host timing where rusticl gives no
# timestamps), the cost cache, copy costs within a context and across platforms
hgr_test(NAME cost_model_testbed SOURCE test_cost_model.c ARGS pocl:0 pocl:1 rusticl:0)
hgr_test(NAME storage_ids_pocl_pair SOURCE test_storage_ids.c ARGS pocl:1 pocl:0)
hgr_test(NAME storage_ids_rusticl_pocl SOURCE test_storage_ids.c ARGS rusticl:0 pocl:0)
hgr_test(NAME params_format SOURCE test_params.c)
if(HGR_HAS_NPY)
  hgr_test(NAME npy_format SOURCE test_npy.c)
endif()
hgr_test(NAME dtype_strings SOURCE test_tensor.c)

# A failed producer reaches the consumer as an error, across every kind of bridge
hgr_test(NAME failure_pocl_to_rusticl SOURCE test_failures.c ARGS pocl:0 rusticl:0 shared SHIM)
hgr_test(NAME failure_rusticl_to_pocl SOURCE test_failures.c ARGS rusticl:0 pocl:0 shared SHIM)
hgr_test(NAME failure_oclgrind_to_pocl SOURCE test_failures.c ARGS oclgrind:0 pocl:0 shared SHIM)
hgr_test(NAME failure_pocl_to_pocl_per_device_context SOURCE test_failures.c ARGS pocl:0 pocl:1 per-device SHIM)

# Attr parsing shared by the ops
hgr_test(NAME op_attrs_unit SOURCE test_op_attrs.c)
# Output shape inference of every op family and of user ops, without devices
hgr_test(NAME op_infer_unit SOURCE test_op_infer.c)

# Op families against plain-C references (tests/optest.c), per platform; Oclgrind
# runs every kernel with its memory, race and uninitialized-value checks.
foreach(family elementwise linalg conv pool norm reduce layout resize rnn nms compact index trilu attention
               quantize matmul_integer)
  hgr_test(NAME ops_${family}_pocl SOURCE test_ops_${family}.c ARGS pocl:0)
  hgr_test(NAME ops_${family}_rusticl SOURCE test_ops_${family}.c ARGS rusticl:0)
  hgr_test(NAME ops_${family}_oclgrind SOURCE test_ops_${family}.c ARGS oclgrind:0 UNINITIALIZED)
endforeach()

# Profiles, stepping and dumps (issue 6): within one context and across platforms
hgr_test(NAME profile_pocl_pair SOURCE test_profile.c ARGS pocl:0 pocl:1)
hgr_test(NAME profile_pocl_rusticl SOURCE test_profile.c ARGS pocl:0 rusticl:0)
hgr_test(NAME profile_pocl_oclgrind SOURCE test_profile.c ARGS oclgrind:0 pocl:0)
# The profile reports through the library API (hgr/profile.h): summary, JSON, trace;
# rusticl's queues give no timestamps, so its commands sit at their enqueue time
hgr_test(NAME profile_report_pocl_pair SOURCE test_profile_report.c ARGS pocl:0 pocl:1)
hgr_test(NAME profile_report_pocl_rusticl SOURCE test_profile_report.c ARGS pocl:0 rusticl:0)

# Several compute queues per device (issue 5): random graphs with 1, 2 and 4 queues
# in one context and across platforms, Oclgrind's single queue, and two independent
# branches on two queues of one PoCL device (their overlap is printed, not asserted)
hgr_test(NAME multiqueue_pocl_pair SOURCE test_multiqueue.c ARGS pocl-pair SHIM)
hgr_test(NAME multiqueue_pocl_rusticl SOURCE test_multiqueue.c ARGS pocl-rusticl SHIM)
hgr_test(NAME multiqueue_oclgrind_pocl SOURCE test_multiqueue.c ARGS oclgrind-pocl SHIM)
hgr_test(NAME multiqueue_two_branches_pocl SOURCE test_multiqueue.c ARGS two-branches SHIM)

# Program binary cache (issue 7): files, rejected entries, callbacks, processes
hgr_test(NAME program_cache_three_platforms SOURCE test_program_cache.c ARGS pocl:0 rusticl:0 oclgrind:0)
hgr_test(NAME program_cache_pocl SOURCE test_program_cache.c ARGS pocl:0)
# By default hgr leaves PoCL's programs to PoCL's own kernel cache (program_cache.c);
# the tests above store them (store_always)
hgr_test(NAME program_cache_left_to_pocl SOURCE test_program_cache.c ARGS left-to-pocl pocl:0)
# Every kernel of kernels/*.cl selectable by name (kernels/select.h): a program
# compiles only the kernels its graph uses
hgr_test(NAME kernel_select_rusticl SOURCE test_kernel_select.c ARGS ${PROJECT_SOURCE_DIR}/kernels rusticl:0)
# The on-disk store under it, the tuning records and the cost cache (issue 34): the
# directory rule, keys, misses, caps, atomic replacement, damaged entries (no device)
hgr_test(NAME store_unit SOURCE test_store.c)

# Kernel warm-up at creation (issue 16): distinct launches once, stored at creation,
# results unchanged, a failure while warming named; Oclgrind is never warmed
hgr_test(NAME warm_up_pocl SOURCE test_warm_up.c ARGS pocl:0 SHIM)
hgr_test(NAME warm_up_rusticl SOURCE test_warm_up.c ARGS rusticl:0 SHIM)
hgr_test(NAME warm_up_oclgrind SOURCE test_warm_up.c ARGS oclgrind:0 SHIM)

# User kernels from a manifest (issue 7): source on two platforms, a PoCL binary alone
hgr_test(NAME user_kernels_pocl_rusticl SOURCE test_user_kernels.c ARGS pocl:0 rusticl:0)
hgr_test(NAME user_kernels_pocl_oclgrind SOURCE test_user_kernels.c ARGS pocl:0 oclgrind:0)

# Executor API: params, default bindings, limits, plan-only
hgr_test(NAME executor_api SOURCE test_executor_api.c)

# Executors sharing parameter buffers (issue 5): across two platforms, and on two
# devices of one context
hgr_test(NAME share_params_pocl_rusticl SOURCE test_share_params.c ARGS pocl:0 rusticl:0)
hgr_test(NAME share_params_pocl_pair SOURCE test_share_params.c ARGS pocl:0 pocl:1)

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
    PASS "3 runs: min.*profile of the last run.*by device.*matches examples/large_expected_0.npy.*matches examples/large_expected_1.npy")
  hgr_cli_test(NAME cli_large_three_platforms
    ARGS run examples/large.json ${LARGE_INPUTS} --device 1=pocl:0 --device 4=rusticl:0 --device 5=oclgrind:0
         --verbose
    PASS "mapped.*matches examples/large_expected_0.npy.*matches examples/large_expected_1.npy")
  # The model examples, split over two devices with copies between them
  set(CNN_ARGS examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy
               --expect 0=examples/cnn_expected_0.npy)
  set(MLP_ARGS examples/mlp.json --params examples/mlp.params --input x=examples/mlp_x.npy
               --expect 0=examples/mlp_expected_0.npy)
  hgr_cli_test(NAME cli_cnn_pocl_pair ARGS run ${CNN_ARGS} --device 1=pocl:0 --device 4=pocl:1
    PASS "same-context +2 copies.*matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_cnn_pocl_rusticl ARGS run ${CNN_ARGS} --device 1=pocl:0 --device 4=rusticl:0
    PASS "cross-platform +2 copies.*matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_cnn_oclgrind_pocl ARGS run ${CNN_ARGS} --device 1=oclgrind:0 --device 4=pocl:0
    PASS "matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_mlp_rusticl_pocl ARGS run ${MLP_ARGS} --device 1=rusticl:0 --device 4=pocl:1
    PASS "cross-platform +1 copies.*matches examples/mlp_expected_0.npy")
  hgr_cli_test(NAME cli_mlp_pocl_oclgrind ARGS run ${MLP_ARGS} --device 1=pocl:0 --device 4=oclgrind:0
    PASS "matches examples/mlp_expected_0.npy")
  # --queues: several compute queues per device; Oclgrind keeps its one queue
  hgr_cli_test(NAME cli_cnn_pocl_pair_four_queues ARGS run ${CNN_ARGS} --device 1=pocl:0 --device 4=pocl:1 --queues 4
    PASS "queues per device:.*pocl:0 +4 compute \\+ 1 transfer.*pocl:1 +4 compute \\+ 1 transfer.*matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_mlp_oclgrind_keeps_one_queue
    ARGS run ${MLP_ARGS} --device 1=pocl:0 --device 4=oclgrind:0 --queues 2
    PASS "oclgrind:0 +1 queue for compute and transfers.*matches examples/mlp_expected_0.npy")
  # --pipeline: runs in flight through fences, across platforms and queues
  hgr_cli_test(NAME cli_large_pipelined_pocl_rusticl
    ARGS run examples/large.json ${LARGE_INPUTS} --device 1=pocl:0 --device 4=rusticl:0 --repeat 20 --pipeline 3
    PASS "20 runs, 3 in flight: .* runs/s.*matches examples/large_expected_0.npy.*matches examples/large_expected_1.npy")
  hgr_cli_test(NAME cli_cnn_pipelined_pocl_pair_two_queues
    ARGS run ${CNN_ARGS} --device 1=pocl:0 --device 4=pocl:1 --queues 2 --repeat 12 --pipeline 4 --profile
    PASS "12 runs, 4 in flight.*device time.*matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_rejects_pipeline_zero ARGS run examples/simplex.json --repeat 3 --pipeline 0 EXIT 2
    PASS "--pipeline takes a number of runs in flight from 1 to 64")
  hgr_cli_test(NAME cli_rejects_seventeen_queues ARGS run examples/simplex.json --queues 17 EXIT 2
    PASS "--queues takes an integer from 1 to 16")
  hgr_cli_test(NAME cli_check_large ARGS check examples/large.json
    PASS "311 nodes, .* valid.*copies per run")
  # A TVM graph that carries no placement gets the graph passes as an ONNX model does
  # (tools/cli_model.c): conv2d -> relu becomes one conv2d
  hgr_cli_test(NAME cli_check_fuses_a_tvm_graphs_conv_epilogue ARGS check tests/data/graphs/conv_relu.json
    PASS "fused patterns: 0 layer norms \\(0 nodes\\), 0 GELUs \\(0 nodes\\), 0 attentions \\(0 nodes\\), 1 conv epilogues \\(1 nodes\\).*conv_relu.json: 4 nodes, .* valid")
  # --profile, --profile-json, --trace and --dump
  hgr_cli_test(NAME cli_profile_large_two_platforms
    ARGS run examples/large.json ${LARGE_INPUTS} --device 1=pocl:0 --device 4=pocl:1 --device 5=rusticl:0 --profile
         --profile-json ${CMAKE_CURRENT_BINARY_DIR}/tmp/large_profile.json
    PASS "profile of the last run.*by device:.*pocl:1.*rusticl:0 .*no timestamps.*by op:.*tanh.*by node.*copies:.*direct.*staged.*profile written")
  foreach(case "simplex_pocl_rusticl;examples/simplex.json;${SIMPLEX_INPUTS};--device;1=pocl:0;--device;4=rusticl:0"
               "large_three_platforms;examples/large.json;${LARGE_INPUTS};--device;1=pocl:0;--device;4=pocl:1;--device;5=oclgrind:0"
               "large_pocl_pair_four_queues;examples/large.json;${LARGE_INPUTS};--device;1=pocl:0;--device;4=pocl:1;--queues;4")
    list(POP_FRONT case name graph)
    add_test(NAME cli_trace_${name}
             COMMAND ${CMAKE_COMMAND} -DHGR=${HGR_CLI} -DGRAPH=${graph}
                     -DOUT=${CMAKE_CURRENT_BINARY_DIR}/tmp/trace_${name}.json "-DARGS=${case}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/check_trace.cmake
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    # The script's exit code decides (FATAL_ERROR on any failed check); no
    # PASS_REGULAR_EXPRESSION, which would make CTest ignore it.
    set_tests_properties(cli_trace_${name} PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}" FIXTURES_REQUIRED testbed
                         SKIP_REGULAR_EXPRESSION "check_trace: skipped" FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}")
  endforeach()
  hgr_cli_test(NAME cli_dump_until
    ARGS run examples/duplex.json ${DUPLEX_INPUTS} --device 1=pocl:0 --device 4=rusticl:0 --dump ${CMAKE_CURRENT_BINARY_DIR}/tmp/dump --until 8
    PASS "dumped 10 tensors to .*/dump, stopped after 8")
  hgr_cli_test(NAME cli_dump_whole_graph
    ARGS run examples/duplex.json ${DUPLEX_INPUTS} --dump ${CMAKE_CURRENT_BINARY_DIR}/tmp/dump_all --expect 0=examples/duplex_expected_0.npy
    PASS "dumped 12 tensors.*matches examples/duplex_expected_0.npy")
  hgr_cli_test(NAME cli_until_needs_dump ARGS run examples/duplex.json --until 3 EXIT 2 PASS "--until works with --dump")
  # The values too: expected_0.npy is relu(2.5 * x), written from the kernels'
  # definitions by tests/data/user_kernels/make_expected.py.
  hgr_cli_test(NAME cli_user_kernels
    ARGS run tests/data/user_kernels/graph.json --kernels tests/data/user_kernels/kernels.json
         --input x=examples/simplex_A.npy --device 1=pocl:0 --device 4=rusticl:0
         --expect 0=tests/data/user_kernels/expected_0.npy
    PASS "output 0 'out:0' float32 \\[10, 5\\].*matches tests/data/user_kernels/expected_0.npy")
  hgr_cli_test(NAME cli_check_user_kernels
    ARGS check tests/data/user_kernels/graph.json --kernels tests/data/user_kernels/kernels.json
    PASS "4 nodes, .* valid")
  hgr_cli_test(NAME cli_unknown_user_op ARGS check tests/data/user_kernels/graph.json EXIT 1
    PASS "unknown func_name 'scale'")
  hgr_cli_test(NAME cli_memory_budget ARGS check examples/large.json --memory-budget 1M EXIT 1
    PASS "more than the memory budget of 1048576 bytes per device")
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

  # Placement by hgr (issue 14): graphs placed anew with --devices and --place, the
  # summary, JSON, `hgr place` round trips and pipelined stages.
  hgr_cli_test(NAME cli_cnn_placed_by_rules
    ARGS run ${CNN_ARGS} --devices pocl:0,pocl:1,rusticl:0 --place op:conv2d=pocl:1 --place op:dense=rusticl:0
    PASS "placement.*pocl:1.*conv2d.*rule.*rusticl:0.*dense.*rule.*matches examples/cnn_expected_0.npy")
  hgr_cli_test(NAME cli_mlp_placed_by_range_on_oclgrind
    ARGS run ${MLP_ARGS} --devices pocl:0,oclgrind:0 --place range:3-5=oclgrind:0
    PASS "oclgrind:0.*rule.*matches examples/mlp_expected_0.npy")
  hgr_cli_test(NAME cli_cnn_stages_pipelined_100_runs
    ARGS run ${CNN_ARGS} --devices pocl:0,rusticl:0 --place stages:2 --repeat 100 --pipeline 2
    PASS "stages.*100 runs, 2 in flight.*matches examples/cnn_expected_0.npy")
  # A device's measured time beside its prediction, more than zero
  set(MEASURED_MS "predicted +[0-9.]+ ms +measured +(0\\.[0-9]*[1-9]|[1-9])[0-9.]* ms")
  hgr_cli_test(NAME cli_mlp_auto_profile_predicted_vs_measured
    ARGS run ${MLP_ARGS} --devices pocl:0,pocl:1,rusticl:0 --place auto --profile
    PASS "predicted \\(cost model\\) vs measured.*${MEASURED_MS}.*matches examples/mlp_expected_0.npy")
  hgr_cli_test(NAME cli_check_json_placed
    ARGS check examples/cnn.json --devices pocl:0,pocl:1 --place op:conv2d=pocl:1 --json
    PASS "\"planned_bytes\":[[:space:]]*[0-9]+.*\"lower_bound_bytes\":[[:space:]]*[0-9]+.*\"no_reuse_bytes\":[[:space:]]*[0-9]+.*\"fallbacks\"")
  hgr_cli_test(NAME cli_check_json_own_placement ARGS check examples/duplex.json --json
    PASS "\"placed_by\": \"graph\".*\"planned_bytes\"")
  hgr_cli_test(NAME cli_place_report
    ARGS check examples/mlp.json --devices pocl:0,pocl:1 --place-report ${CMAKE_CURRENT_BINARY_DIR}/tmp/mlp_place.json
    PASS "placement report written to .*mlp_place.json")
  hgr_cli_test(NAME cli_rejects_a_bad_place_rule ARGS run examples/simplex.json --place op:add EXIT 2
    PASS "op:add")
  hgr_cli_test(NAME cli_rejects_device_with_devices
    ARGS run examples/simplex.json --device 1=pocl:0 --devices pocl:0 EXIT 2
    PASS "placed anew")
  hgr_cli_test(NAME cli_place_help ARGS place --help PASS "--params-out")
  # --mpi-timeout is checked by run, check and place alike, with or without mpirun
  hgr_cli_test(NAME cli_place_rejects_mpi_timeout_zero ARGS place examples/cnn.json -o never.json --mpi-timeout 0
    EXIT 2 PASS "hgr place: --mpi-timeout takes seconds, more than 0")
  hgr_cli_test(NAME cli_check_accepts_mpi_timeout ARGS check examples/cnn.json --mpi-timeout 5
    PASS "valid")
  # --devices all: every device found, Oclgrind last: stages:2 on the first two
  hgr_cli_test(NAME cli_devices_all
    ARGS check examples/cnn.json --devices all --place stages:2
    PASS "pocl:0 \\(key 1\\).*pocl:1 \\(key 2\\)")
  foreach(case "cnn_three_devices;examples/cnn.json;examples/cnn.params;--input x=examples/cnn_x.npy --expect 0=examples/cnn_expected_0.npy;--devices;pocl:0,pocl:1,rusticl:0;--place;range:0-6=pocl:1;--place;op:dense=rusticl:0"
               "mlp_rusticl_first;examples/mlp.json;examples/mlp.params;--input x=examples/mlp_x.npy --expect 0=examples/mlp_expected_0.npy;--devices;rusticl:0,pocl:0;--place;op:softmax=pocl:0"
               "large_stages;examples/large.json;examples/large.params;--input x_small=examples/large_x_small.npy --input x_big=examples/large_x_big.npy --expect 0=examples/large_expected_0.npy --expect 1=examples/large_expected_1.npy;--devices;pocl:1,pocl:0;--place;stages:2")
    list(POP_FRONT case name graph params run_args)
    add_test(NAME cli_place_roundtrip_${name}
             COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/check_place_roundtrip.sh" ${HGR_CLI}
                     "${CMAKE_CURRENT_BINARY_DIR}/tmp" ${graph} ${params} "${run_args}" ${case}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(cli_place_roundtrip_${name} PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}"
                         FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 300
                         FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}")
  endforeach()

  # The CLI tests can fail. cli_wrong_exit_code_fails is cli_memory_budget expecting
  # exit 0: its output still matches, so it fails only because run_cli.sh checks the
  # exit code (with a PASS_REGULAR_EXPRESSION in hgr_cli_test it would pass, and
  # WILL_FAIL would turn that into a failure). check_run_cli.sh runs run_cli.sh on
  # each way to be wrong (exit code, output, both) and requires exit 1 and the reason.
  hgr_cli_test(NAME cli_wrong_exit_code_fails ARGS check examples/large.json --memory-budget 1M WILL_FAIL
    PASS "more than the memory budget of 1048576 bytes per device")
  add_test(NAME cli_run_script_checks_exit_and_output
           COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/check_run_cli.sh" "${CMAKE_CURRENT_SOURCE_DIR}/run_cli.sh"
                   ${HGR_CLI})
  set_tests_properties(cli_run_script_checks_exit_and_output PROPERTIES
    ENVIRONMENT "${HGR_TEST_ENVIRONMENT}" FIXTURES_REQUIRED testbed TIMEOUT 120 WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77)
  # `hgr devices` on a machine without any OpenCL platform (an ICD directory with no
  # .icd file here; under qemu-user the host's drivers cannot load either) says so
  # and exits 0.
  hgr_cli_test(NAME cli_devices_without_a_platform ARGS devices
    PASS "No OpenCL devices found.*OpenCL ICD loader +clGetPlatformIDs failed: CL_PLATFORM_NOT_FOUND_KHR")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/tmp/no-icds")
  set_property(TEST cli_devices_without_a_platform APPEND PROPERTY ENVIRONMENT
               "OCL_ICD_VENDORS=${CMAKE_CURRENT_BINARY_DIR}/tmp/no-icds")
endif()

# The installed package (issue 7): `cmake --install` into a fresh prefix, then
# tests/consumer/ built against it with find_package (hgr::hgr, hgr::hgr_static)
# and pkg-config (shared, --static), and run. Not in cross builds: the consumers are
# configured, built and run by this script with the host's tools.
if(NOT CMAKE_CROSSCOMPILING)
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/tmp/install_consumer
          -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/consumer -DCC=${CMAKE_C_COMPILER} "-DGENERATOR=${CMAKE_GENERATOR}"
          -DCONFIG=$<CONFIG> -DPKG_CONFIG=${PKG_CONFIG_EXECUTABLE} -DLIBDIR=${CMAKE_INSTALL_LIBDIR}
          -DINCLUDEDIR=${CMAKE_INSTALL_INCLUDEDIR} -DBINDIR=${CMAKE_INSTALL_BINDIR} -DVERSION=${PROJECT_VERSION}
          -DHAS_CLI=$<TARGET_EXISTS:hgr_cli> -DHAS_NPY=${HGR_HAS_NPY} "-DSANITIZE=${HGR_SANITIZE}"
          -DKEEP_MODULES=${CMAKE_CURRENT_SOURCE_DIR}/keep_modules.c
          -P ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer.cmake)
set_tests_properties(install_consumer PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}" FIXTURES_REQUIRED testbed
                     SKIP_REGULAR_EXPRESSION "no OpenCL device to run them: skipped"
                     FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}" TIMEOUT 180)
endif()

# Two executors on two threads sharing one instance (issue 8); test_threads exits
# non-zero when an output is wrong, and that exit code decides. test_threads_tsan
# links the runtime compiled again with -fsanitize=thread, so data races in hgr fail
# it; only in builds without other sanitizers (TSan cannot be mixed with ASan).
add_executable(test_threads test_threads.c)
if(HGR_SANITIZE) # a driver module's leak must stay nameable for lsan.supp (keep_modules.c)
  target_sources(test_threads PRIVATE keep_modules.c)
endif()
target_link_libraries(test_threads PRIVATE hgr_static m)
set_target_properties(test_threads PROPERTIES C_STANDARD 11)
hgr_target_warnings(test_threads)
foreach(devices "pocl:0;pocl:1;rusticl:0")
  add_test(NAME threads_two_executors COMMAND test_threads ${devices})
  set_tests_properties(threads_two_executors PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}"
                       FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
# Not in cross builds: TSan re-executes its program, which qemu-user cannot, and has
# no 32-bit ARM runtime.
if(NOT HGR_SANITIZE AND NOT CMAKE_CROSSCOMPILING AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  get_target_property(hgr_tsan_sources hgr_objects SOURCES)
  add_library(hgr_tsan STATIC ${hgr_tsan_sources})
  get_target_property(hgr_tsan_definitions hgr_objects COMPILE_DEFINITIONS)
  target_compile_definitions(hgr_tsan PRIVATE ${hgr_tsan_definitions} PUBLIC CL_TARGET_OPENCL_VERSION=120)
  target_include_directories(hgr_tsan PUBLIC "${PROJECT_SOURCE_DIR}/include" "${PROJECT_BINARY_DIR}/include"
                             PRIVATE "$<TARGET_PROPERTY:hgr_internal,INTERFACE_INCLUDE_DIRECTORIES>")
  set_target_properties(hgr_tsan PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
  target_compile_options(hgr_tsan PUBLIC -fsanitize=thread -g -O1)
  target_link_options(hgr_tsan PUBLIC -fsanitize=thread)
  target_link_libraries(hgr_tsan PUBLIC OpenCL::OpenCL Threads::Threads ${HGR_CJSON_TARGET} m)
  add_executable(test_threads_tsan test_threads.c)
  target_link_libraries(test_threads_tsan PRIVATE hgr_tsan)
  set_target_properties(test_threads_tsan PROPERTIES C_STANDARD 11)
  add_test(NAME threads_two_executors_tsan COMMAND test_threads_tsan pocl:0 pocl:1 rusticl:0)
  set_tests_properties(threads_two_executors_tsan PROPERTIES
    ENVIRONMENT "${HGR_TEST_ENVIRONMENT};TSAN_OPTIONS=halt_on_error=1 exitcode=66 suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan.supp"
    FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 600 FAIL_REGULAR_EXPRESSION "WARNING: ThreadSanitizer")
endif()

# OpenCL fault injection (issue 8): each OpenCL call of a whole executor lifecycle
# fails in turn. fault_shim.c wraps every OpenCL function the library calls
# (HGR_FAULT_WRAPPED and hgr_link_fault_shim in CMakeLists.txt);
# fault_shim_wraps_every_opencl_call checks that the list names every one.
add_executable(fault_lifecycle fault_lifecycle.c)
if(HGR_SANITIZE)
  target_sources(fault_lifecycle PRIVATE keep_modules.c)
endif()
target_link_libraries(fault_lifecycle PRIVATE hgr_internal)
set_target_properties(fault_lifecycle PROPERTIES C_STANDARD 11)
hgr_target_warnings(fault_lifecycle)
hgr_link_fault_shim(fault_lifecycle)
add_executable(fault_walk fault_walk.c)
set_target_properties(fault_walk PROPERTIES C_STANDARD 11)
hgr_target_warnings(fault_walk)
# Programs built from source, and a run's output bound as the next run's inputs
# (device buffers: in place, and staged across contexts); then loaded from the
# program cache (binaries, stores).
# Not in cross builds: fault_walk starts fault_lifecycle as a child process, which a
# program under qemu-user cannot do without binfmt_misc.
if(NOT CMAKE_CROSSCOMPILING)
add_test(NAME fault_injection_walk
  COMMAND fault_walk --icds pocl,oclgrind $<TARGET_FILE:fault_lifecycle> device-values)
add_test(NAME fault_injection_walk_program_cache
  COMMAND fault_walk --icds pocl,oclgrind $<TARGET_FILE:fault_lifecycle> cache)
set_tests_properties(fault_injection_walk fault_injection_walk_program_cache PROPERTIES
  ENVIRONMENT "${HGR_TEST_ENVIRONMENT}" FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 1200)
endif()
add_test(NAME fault_shim_wraps_every_opencl_call
  COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:hgr_static> "-DWRAPPED=${HGR_FAULT_WRAPPED}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_fault_wraps.cmake)

# libFuzzer targets for the loaders, a bounded time each (fuzz/tests.cmake); they are
# built for the host with clang, so a cross build leaves them out.
if(HGR_FUZZ AND NOT CMAKE_CROSSCOMPILING)
  include("${PROJECT_SOURCE_DIR}/fuzz/tests.cmake")
endif()

# Runs in flight, fences, caller-owned memory and exported outputs (issue 5)
hgr_test(NAME pipeline_one_device SOURCE test_pipeline.c ARGS pocl:0 pocl:0 SHIM)
hgr_test(NAME pipeline_pocl_pair SOURCE test_pipeline.c ARGS pocl:0 pocl:1 SHIM)
hgr_test(NAME pipeline_pocl_rusticl SOURCE test_pipeline.c ARGS pocl:0 rusticl:0 SHIM)
hgr_test(NAME pipeline_rusticl_pocl SOURCE test_pipeline.c ARGS rusticl:0 pocl:0 SHIM)
hgr_test(NAME pipeline_oclgrind_pocl SOURCE test_pipeline.c ARGS oclgrind:0 pocl:0 24 SHIM)
# State that stays on the device (issue 36, section 3): a streaming model's state
# output bound as the next run's input, 1,000 chunks against the host round trip,
# ordered by events (a held-back first state), no host copy of the state; across
# contexts (other platform, a context per device) through a bridged staged copy
hgr_test(NAME state_chain_pocl SOURCE test_state_chain.c ARGS pocl:0 1000 SHIM)
hgr_test(NAME state_chain_rusticl SOURCE test_state_chain.c ARGS rusticl:0 1000 SHIM)
hgr_test(NAME state_chain_oclgrind SOURCE test_state_chain.c ARGS oclgrind:0 40 SHIM)
hgr_test(NAME state_chain_pocl_rusticl SOURCE test_state_chain.c ARGS pocl:0 rusticl:0 200 SHIM)
hgr_test(NAME state_chain_context_per_device SOURCE test_state_chain.c ARGS pocl:0 pocl:1 200 context-per-device SHIM)

# Copies between ranks (issue 19) through an in-memory transport: the ranks are
# executors of one process (tests/mpi/ runs them as MPI processes)
hgr_test(NAME remote_ranks SOURCE test_remote.c SHIM)

# Placement (issue 14) over pocl:0, pocl:1, rusticl:0 (and oclgrind:0 for a few
# random graphs): rules, FIRST, fallback for a user op only PoCL has a binary for,
# stages:2 and auto, the examples re-placed by range rules and random graphs by
# random rules (run and compared), the plan verifier; memory planned/bound/no-reuse
# printed per device
# What needs no device: fake device records, the plan verifier, the memory planner
hgr_test(NAME place_unit SOURCE test_place.c ARGS unit)
hgr_test(NAME place_testbed SOURCE test_place.c)
# Random builder graphs under every policy (first with random rules, stages:2 to 4,
# auto) over pocl:0, pocl:1, rusticl:0 and oclgrind:0: bit for bit the single-device
# outputs, every plan verified, planned/bound printed
hgr_test(NAME place_random_policies SOURCE test_place_random.c ARGS 6 TIMEOUT 600)
# AUTO with real calibration: small nodes stay off rusticl, heavy branches, the
# cost cache; predicted beside measured
hgr_test(NAME place_auto_small_nodes SOURCE test_place_auto.c ARGS small TIMEOUT 600)
hgr_test(NAME place_auto_heavy_branches SOURCE test_place_auto.c ARGS branches TIMEOUT 600)
set_property(TEST place_auto_heavy_branches APPEND PROPERTY ENVIRONMENT POCL_MAX_PTHREAD_COUNT=1)
# Across ranks, in one process: "r0/pocl:0", "r1/pocl:0", ... (one local device):
# stages over ranks, rank-1 rules, inputs read and outputs written on rank 0, weights
# with their consumer, cross-host copies counted, the cross-host cost in AUTO
hgr_test(NAME place_ranks SOURCE test_place_ranks.c)
# stages:2 over pocl:0 and rusticl:0, 100 runs with 2 in flight and the input
# changing every run: every run's output equals one device's
if(HGR_HAS_NPY)
  hgr_test(NAME place_stages_pipelined SOURCE test_place_pipeline.c
           ARGS ${PROJECT_SOURCE_DIR}/examples pocl:0 rusticl:0 TIMEOUT 600)
endif()

# ONNX's backend tests (Debian's libonnx-testdata) through the ONNX loader: every
# test on pocl:0, rusticl:0 and under Oclgrind's checks (about 10, 35 and 60 s).
# Each run writes its report (docs/onnx-conformance.md is generated from them by
# scripts/onnx_conformance_doc.py); a failed test fails the CTest entry.
if(HGR_ONNX)
  # The loader on models the test writes: folding, fusion, symbolic dims, external
  # data, and hostile files; then a fused model run on pocl:0
  hgr_test(NAME onnx_load_unit SOURCE test_onnx_load.c)
  hgr_test(NAME onnx_load_pocl SOURCE test_onnx_load.c ARGS run)
  # Control flow at load (If inlined, Loop and Scan unrolled, scopes, the limits, what
  # is refused), then the models run on pocl:0 through the model object
  hgr_test(NAME onnx_control_unit SOURCE test_onnx_control.c)
  hgr_test(NAME onnx_control_pocl SOURCE test_onnx_control.c ARGS run)
  # ONNX Runtime's contrib ops (com.microsoft) hgr reads, and the refusal of the rest
  # naming op and domain; then SkipLayerNormalization and friends run on pocl:0
  hgr_test(NAME onnx_contrib_unit SOURCE test_onnx_contrib.c)
  hgr_test(NAME onnx_contrib_pocl SOURCE test_onnx_contrib.c ARGS run)
  # The parsed model under the model object, without a device: symbolic dims, ops
  # checked without shapes, inputs that decide shapes, folds kept across imports
  hgr_test(NAME onnx_model_unit SOURCE test_onnx_model.c ARGS ${HGR_TEST_DATA_DIR}/symbolic)
  # The hostile files of issue 33 (tests/data/hostile/): each a clear refusal; and the
  # amplifying ones under a 4 GiB address space (skipped under AddressSanitizer; not
  # in cross builds, whose emulator needs more address space than that for itself)
  hgr_test(NAME onnx_hostile_files SOURCE test_onnx_hostile.c ARGS ${HGR_TEST_DATA_DIR}/hostile)
  # The model object (hgr/model.h) on the symbolic models of tests/data/symbolic/: many
  # shapes in one model, inputs that decide shapes, shared weights, eviction; on each
  # platform of the test bed
  foreach(device pocl:0 rusticl:0 oclgrind:0)
    string(REGEX REPLACE ":.*" "" platform "${device}")
    hgr_test(NAME model_shapes_${platform} SOURCE test_model.c ARGS ${HGR_TEST_DATA_DIR}/symbolic ${device})
  endforeach()
  # A failing allocator walked over making the instance and over the load, the
  # specialization and the run of three symbolic models: each failure a clean
  # RESOURCE_EXHAUSTED, every block freed (include/hgr/allocator.h). Each of its
  # ~1600 steps loads a model and builds its programs again (from PoCL's cache):
  # 130 s here, over 300 s on CI's busy machine
  hgr_test(NAME alloc_walk_pocl SOURCE test_alloc_walk.c ARGS ${HGR_TEST_DATA_DIR}/symbolic pocl:0 TIMEOUT 900)
  if(NOT CMAKE_CROSSCOMPILING)
    hgr_test(NAME onnx_hostile_rlimit SOURCE test_onnx_hostile.c ARGS ${HGR_TEST_DATA_DIR}/hostile rlimit)
  endif()
  # ... and through the hgr program: `hgr check` and `hgr run` refuse each with its
  # message and exit 1 (before the fixes: SIGSEGV, or "valid" and heap bytes in the
  # output of the wrapped Reshape)
  set(hostile_models
      "reshape_overflow_gather@@element count exceeds 2\\^63 - 1 at shape\\[1\\] = 4"
      "reshape_overflow_slice@@element count exceeds 2\\^63 - 1"
      "omitted_input_sum@@node 0 'y' \\(Sum, opset 13\\): input 0 is required, but the node omits it"
      "omitted_input_mean@@\\(Mean, opset 13\\): input 0 is required"
      "nested_type_5000@@nests protobuf messages more than 64 deep"
      "nested_if_3000@@nests graphs \\(If, Loop and Scan bodies\\) more than 16 deep"
      "constant_of_shape_20_gib@@RESOURCE_EXHAUSTED: .*node 2 'c2' \\(ConstantOfShape, opset 13\\): .*beyond its budget"
      "gather_20_gib@@RESOURCE_EXHAUSTED: .*\\(Gather, opset 13\\): .*beyond its budget"
      "range_float_overflow@@\\(Range, opset 13\\): a range of 3e\\+76 elements")
  # What a load held, from hgr_onnx_report_t: y = x + w, w 1,000 floats decoded and copied into the params
  hgr_cli_test(NAME cli_onnx_check_says_what_the_loader_held ARGS check tests/data/hostile/benign_add_1000.onnx
    PASS "the loader held at most 8000 bytes on the host at once")
  foreach(entry ${hostile_models})
    string(REPLACE "@@" ";" pair "${entry}")
    list(GET pair 0 model)
    list(GET pair 1 expected)
    hgr_cli_test(NAME cli_hostile_check_${model} ARGS check tests/data/hostile/${model}.onnx EXIT 1 PASS "${expected}")
    hgr_cli_test(NAME cli_hostile_run_${model} ARGS run tests/data/hostile/${model}.onnx --devices pocl:0 EXIT 1
                 PASS "${expected}")
  endforeach()
  # The CLI on ONNX models: .pb inputs and expectations, node counts, --input-shape,
  # errors, and `hgr place` converting a model to TVM JSON + params that run alone
  set(onnx_data /usr/share/libonnx-testdata/data)
  if(EXISTS ${onnx_data}/node/test_conv_with_strides_padding/model.onnx)
    set(conv_test ${onnx_data}/node/test_conv_with_strides_padding)
    hgr_cli_test(NAME cli_onnx_run_node_test
      ARGS run ${conv_test}/model.onnx --input x=${conv_test}/test_data_set_0/input_0.pb
           --input W=${conv_test}/test_data_set_0/input_1.pb --expect 0=${conv_test}/test_data_set_0/output_0.pb
           --rtol 1e-3 --atol 1e-7 --devices pocl:0
      PASS "1 nodes -> 1 graph nodes.*output 0 'y:0' float32 \\[1, 1, 4, 3\\].*matches")
    # float16 outputs compared as values, not bytes; a wrong one fails the run
    set(half_test ${onnx_data}/node/test_cast_FLOAT_to_FLOAT16)
    hgr_cli_test(NAME cli_onnx_float16_output_matches
      ARGS run ${half_test}/model.onnx --input input=${half_test}/test_data_set_0/input_0.pb
           --expect 0=${half_test}/test_data_set_0/output_0.pb --devices pocl:0
      PASS "output 0 'output:0' float16 \\[3, 4\\]: 0.548828, .*matches .*largest difference 0\\)")
    hgr_cli_test(NAME cli_onnx_float16_output_mismatch_fails
      ARGS run ${half_test}/model.onnx --input input=${onnx_data}/node/test_cast_FLOAT16_to_FLOAT/test_data_set_0/output_0.pb
           --expect 0=${half_test}/test_data_set_0/output_0.pb --devices pocl:0 EXIT 1
      PASS "float16 \\[3, 4\\].*DOES NOT MATCH .*largest difference 0.773")
    hgr_cli_test(NAME cli_onnx_check_counts ARGS check ${onnx_data}/pytorch-converted/test_Conv2d/model.onnx
      PASS "ONNX IR 3, opset 6: 1 nodes -> 1 graph nodes \\(0 folded at load, 0 removed, 0 fused; 0 elementwise nodes fused into 0 kernels\\).*valid")
    hgr_cli_test(NAME cli_onnx_unsupported_op ARGS check ${onnx_data}/node/test_gridsample/model.onnx EXIT 1
      PASS "UNIMPLEMENTED: .*node 0 'Y' \\(GridSample, opset 16\\): op 'GridSample' is not supported; hgr supports: Abs, ")
    hgr_cli_test(NAME cli_onnx_input_shape_must_agree ARGS check ${conv_test}/model.onnx --input-shape x=1,1,7,6
      EXIT 1 PASS "input 'x': dimension 3 is 5 in the model; the input given has 6")
    set(reshape_test ${onnx_data}/node/test_reshape_negative_dim)
    set(reshape_args run ${reshape_test}/model.onnx --input data=${reshape_test}/test_data_set_0/input_0.pb
                     --input shape=${reshape_test}/test_data_set_0/input_1.pb --devices pocl:0)
    # The shape input decides shapes: hgr finds it and takes its --input values as
    # constants, without --fix-input
    hgr_cli_test(NAME cli_onnx_shape_input_is_found ARGS ${reshape_args}
                 --expect 0=${reshape_test}/test_data_set_0/output_0.pb
      PASS "input 'shape' decides shapes: its --input values are constants.*output 0 'reshaped:0' float32 \\[2, 6, 2\\].*matches")
    # A symbolic model checked without shapes: its declared dims, and exit 0
    hgr_cli_test(NAME cli_onnx_check_symbolic ARGS check tests/data/symbolic/cnn.onnx
      PASS "input 'x': float32 \\[N, 3, H, W\\].*output 'y': float32 \\[N, 5\\].*every op supported")
    hgr_cli_test(NAME cli_onnx_run_symbolic_needs_shapes ARGS run tests/data/symbolic/cnn.onnx --devices pocl:0 EXIT 1
      PASS "graph input 'x': dimension 0 is symbolic \\('N'\\); give the input's shape")
    hgr_cli_test(NAME cli_onnx_fix_input ARGS ${reshape_args} --fix-input shape
                 --expect 0=${reshape_test}/test_data_set_0/output_0.pb
      PASS "output 0 'reshaped:0' float32 \\[2, 6, 2\\].*matches")
    hgr_cli_test(NAME cli_onnx_input_shape_is_for_onnx ARGS check examples/cnn.json --input-shape x=1 EXIT 1
      PASS "--input-shape and --fix-input are for ONNX models")
    add_test(NAME cli_place_roundtrip_onnx
             COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/check_place_roundtrip.sh" ${HGR_CLI}
                     "${CMAKE_CURRENT_BINARY_DIR}/tmp" ${onnx_data}/pytorch-converted/test_Conv2d/model.onnx -
                     "--input 0=${onnx_data}/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb --expect 0=${onnx_data}/pytorch-converted/test_Conv2d/test_data_set_0/output_0.pb --rtol 1e-3 --atol 1e-7"
                     --devices pocl:0,rusticl:0 --place op:conv2d=rusticl:0
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(cli_place_roundtrip_onnx PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}"
                         FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 300
                         FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}")
  endif()
  hgr_test(NAME onnx_conformance_pocl SOURCE onnx_conformance.c TIMEOUT 1500
           ARGS pocl:0 --report ${CMAKE_CURRENT_BINARY_DIR}/onnx-conformance-pocl.tsv)
  hgr_test(NAME onnx_conformance_rusticl SOURCE onnx_conformance.c TIMEOUT 900
           ARGS rusticl:0 --report ${CMAKE_CURRENT_BINARY_DIR}/onnx-conformance-rusticl.tsv)
  hgr_test(NAME onnx_conformance_oclgrind SOURCE onnx_conformance.c TIMEOUT 900
           ARGS oclgrind:0 --report ${CMAKE_CURRENT_BINARY_DIR}/onnx-conformance-oclgrind.tsv)
endif()

# The model-zoo architectures (the onnx wheel's light models) against their
# expected outputs and ONNX Runtime. Not in cross builds: the runner is host Python
# with the venv's onnxruntime, comparing against hgr on the test bed's devices.
if(NOT CMAKE_CROSSCOMPILING)
  include("${CMAKE_CURRENT_LIST_DIR}/onnx_models.cmake")
endif()

# Tile choices and tuning (hgr/tune.h): the tuning file alone, then every GEMM tile
# candidate against the references, stored winners and hgr_tune_graph on PoCL (timed
# from profiling timestamps) and rusticl (which gives none: timed node by node).
hgr_test(NAME tune_store_unit SOURCE test_tune.c)
hgr_test(NAME tune_pocl SOURCE test_tune.c ARGS pocl:0)
hgr_test(NAME tune_rusticl SOURCE test_tune.c ARGS rusticl:0)
if(TARGET hgr_cli)
  # `hgr tune` writes records into a cache directory of its own that `hgr run --verbose` then reports taking
  add_test(NAME cli_tune_then_run_takes_the_records
           COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/check_tune_cli.sh" ${HGR_CLI} "${CMAKE_CURRENT_BINARY_DIR}/tmp")
  set_tests_properties(cli_tune_then_run_takes_the_records PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}"
                       FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 300 WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  if(HGR_ONNX)
    # `hgr compile --bundle` in one process, `hgr run BUNDLE` in another with empty caches;
    # bundles for another driver or hgr, or corrupt, refused
    add_test(NAME cli_compile_bundle_runs_with_empty_caches
             COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/check_bundle_cli.sh" ${HGR_CLI} "${CMAKE_CURRENT_BINARY_DIR}/tmp")
    set_tests_properties(cli_compile_bundle_runs_with_empty_caches PROPERTIES ENVIRONMENT "${HGR_TEST_ENVIRONMENT}"
                         FIXTURES_REQUIRED testbed SKIP_RETURN_CODE 77 TIMEOUT 300
                         WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  endif()
endif()

# The hgr program under mpirun (issue 19; docs/distributed.md): every rank runs the
# command, rank 0 prints. Each test checks the exit code and the output of all ranks
# together (run_cli.sh), as hgr_cli_test does.
if(TARGET hgr_cli AND TARGET hgr_mpi_static AND HGR_HAS_NPY)
  # One such test: run_cli.sh over mpirun, whose arguments after its root flags are
  # the rest (ARGN). exit empty: 0.
  function(hgr_mpi_cli_add name exit pass)
    if(NOT exit)
      set(exit 0)
    endif()
    add_test(NAME ${name}
             COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_cli.sh" ${exit} "${pass}" ${MPIEXEC_EXECUTABLE}
                     --allow-run-as-root --oversubscribe ${ARGN})
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${HGR_MPI_TEST_ENVIRONMENT}"
      FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}" FIXTURES_REQUIRED testbed TIMEOUT 300 SKIP_RETURN_CODE 77
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  endfunction()
  # RANKS ranks running `hgr ARGS`
  function(hgr_mpi_cli_test)
    cmake_parse_arguments(T "" "NAME;RANKS;PASS;EXIT" "ARGS" ${ARGN})
    hgr_mpi_cli_add(${T_NAME} "${T_EXIT}" "${T_PASS}" -np ${T_RANKS} $<TARGET_FILE:hgr_cli> ${T_ARGS})
  endfunction()
  set(duplex_inputs --input A=examples/duplex_A.npy --input B=examples/duplex_B.npy --input C=examples/duplex_C.npy
      --input D=examples/duplex_D.npy --input E=examples/duplex_E.npy)
  set(cnn_inputs examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy
      --expect 0=examples/cnn_expected_0.npy)
  hgr_mpi_cli_test(NAME mpi_cli_devices RANKS 3 ARGS devices
    PASS "r0/pocl:0.*r1/pocl:0.*r2/pocl:1.*Device pairs.*cross-host")
  # ... and as JSON: rank-named specs, and the pairs between ranks cross-host
  hgr_mpi_cli_test(NAME mpi_cli_devices_json RANKS 2 ARGS devices --json
    PASS "\"ranks\":[^,]*2,.*\"spec\":[^,]*\"r1/pocl:0\",.*\"from\":[^,]*\"r0/pocl:0\",[^,]*\"to\":[^,]*\"r1/pocl:0\",[^,]*\"class\":[^,]*\"cross-host\"")
  # A TVM graph's own keys bound to two ranks: inputs set where they live, the output
  # read and checked on rank 1, three cross-host copies each way in step
  hgr_mpi_cli_test(NAME mpi_cli_duplex_bound RANKS 2 ARGS run examples/duplex.json ${duplex_inputs}
    --device 4=r0/pocl:0 --device 1=r1/pocl:1 --expect 0=examples/duplex_expected_0.npy --repeat 5
    PASS "key 1 +-> r1/pocl:1 +\\(rank 1's device\\).*cross-host +3 copies.*5 runs:.*output 0 is on rank 1")
  # ... and a wrong expectation there fails the run (rank 1 checks it)
  hgr_mpi_cli_test(NAME mpi_cli_duplex_bound_mismatch RANKS 2 EXIT 1 ARGS run examples/duplex.json ${duplex_inputs}
    --device 4=r0/pocl:0 --device 1=r1/pocl:1 --expect 0=examples/duplex_A.npy
    PASS "hgr: an output does not match its expected values")
  # Placed by hgr: pipeline stages over ranks, pipelined runs, the output on rank 0
  hgr_mpi_cli_test(NAME mpi_cli_cnn_stages2 RANKS 2 ARGS run ${cnn_inputs} --devices r0/pocl:0,r1/pocl:0
    --place stages:2 --repeat 12 --pipeline 2
    PASS "placement \\(policy stages:2\\).*r1/pocl:0 \\(key 2\\).*copies: cross-host 2.*12 runs, 2 in flight.*matches")
  # Rank 2 on rusticl, except under the sanitizers: the MPI tests' slow unwinding on
  # every allocation (fast_unwind_on_malloc=0) makes rusticl take minutes per run, past
  # the ranks' timeout (bench/notes.md, "Across ranks")
  set(rank2 r2/rusticl:0)
  if(HGR_SANITIZE)
    set(rank2 r2/pocl:0)
  endif()
  hgr_mpi_cli_test(NAME mpi_cli_cnn_stages3 RANKS 3 ARGS run ${cnn_inputs}
    --devices r0/pocl:0,r1/pocl:1,${rank2} --place stages:3 --repeat 8 --pipeline 3
    PASS "${rank2} \\(key 3\\).*8 runs, 3 in flight.*matches")
  # --profile: rank 1's nodes in rank 1's profile, rank 1's device measured beside its
  # prediction on rank 0; the files of rank 1 beside rank 0's
  hgr_mpi_cli_test(NAME mpi_cli_cnn_profile RANKS 2 ARGS run ${cnn_inputs} --devices r0/pocl:0,r1/pocl:0
    --place stages:2 --profile --profile-json ${CMAKE_CURRENT_BINARY_DIR}/mpi_cli_profile.json
    PASS "sent to a rank.*rank 1: profile of the last run.*received from a rank.* pocl:0 +${MEASURED_MS}.*r1/pocl:0 +${MEASURED_MS}.*profile written to .*mpi_cli_profile.json \\(every other rank N's to FILE.rN\\)")
  # Rules: the convolutions on rank 1, the rest FIRST on rank 0
  hgr_mpi_cli_test(NAME mpi_cli_cnn_rule RANKS 2 ARGS run ${cnn_inputs} --devices r0/pocl:0,r1/pocl:0
    --place op:conv2d=r1/pocl:0 --repeat 3
    PASS "r1/pocl:0 \\(key 2\\).*conv2d +2 +rule.*3 runs:.*matches")
  # Hosts with different devices (mpirun's MPMD form): rank 0 has one PoCL device,
  # rank 1 two. ARGS is rank 0's command, ARGS_1 rank 1's (default: the same); FLAGS
  # go to mpirun.
  function(hgr_mpi_cli_hosts_test)
    cmake_parse_arguments(T "" "NAME;PASS;EXIT" "ARGS;ARGS_1;FLAGS" ${ARGN})
    if(NOT T_ARGS_1)
      set(T_ARGS_1 ${T_ARGS})
    endif()
    hgr_mpi_cli_add(${T_NAME} "${T_EXIT}" "${T_PASS}" ${T_FLAGS}
                    -np 1 -x POCL_DEVICES=pthread $<TARGET_FILE:hgr_cli> ${T_ARGS} :
                    -np 1 -x "POCL_DEVICES=pthread pthread" $<TARGET_FILE:hgr_cli> ${T_ARGS_1})
  endfunction()
  # r1/pocl:1, which rank 0 lacks, is placed from rank 1's own measure
  hgr_mpi_cli_hosts_test(NAME mpi_cli_cnn_hosts_differ
    ARGS run ${cnn_inputs} --devices r0/pocl:0,r1/pocl:1 --place stages:2 --repeat 6 --pipeline 2
    PASS "r1/pocl:1 \\(key 2\\).*copies: cross-host 2.*6 runs, 2 in flight.*matches")
  # --devices all under mpirun: every rank's devices (rusticl off, too slow under the
  # sanitizers), Oclgrind's last: three stages on r0/pocl:0, r1/pocl:0 and r1/pocl:1
  hgr_mpi_cli_hosts_test(NAME mpi_cli_cnn_devices_all FLAGS -x RUSTICL_ENABLE=
    ARGS run ${cnn_inputs} --devices all --place stages:3
    PASS "r0/pocl:0 \\(key 1\\).*r1/pocl:0 \\(key 2\\).*r1/pocl:1 \\(key 3\\).*matches")
  # `hgr place` under mpirun places with every rank (rank 1's own pocl:1) and rank 0
  # writes the graph and its params; `hgr run` of that file under mpirun then needs
  # no placement flags. The weights of stage 2 are read on rank 1, so only the two
  # activations cross.
  set(mpi_placed "${CMAKE_CURRENT_BINARY_DIR}/mpi_placed_cnn")
  set(place_args place examples/cnn.json --params examples/cnn.params --devices r0/pocl:0,r1/pocl:1
      --place stages:2 -o ${mpi_placed}.json --params-out ${mpi_placed}.params)
  hgr_mpi_cli_hosts_test(NAME mpi_cli_cnn_place ARGS ${place_args}
    PASS "r1/pocl:1 \\(key 2\\).*copies: cross-host 2[^0-9].*placed graph written to .*params \\(6\\) written to")
  hgr_mpi_cli_hosts_test(NAME mpi_cli_cnn_run_placed
    ARGS run ${mpi_placed}.json --params ${mpi_placed}.params --input x=examples/cnn_x.npy
         --expect 0=examples/cnn_expected_0.npy --repeat 4 --pipeline 2
    PASS "key 2 +-> r1/pocl:1 +\\(rank 1's device\\).*cross-host +2 copies.*4 runs, 2 in flight.*matches")
  set_tests_properties(mpi_cli_cnn_place PROPERTIES FIXTURES_SETUP mpi_placed_cnn)
  set_tests_properties(mpi_cli_cnn_run_placed PROPERTIES FIXTURES_REQUIRED "testbed;mpi_placed_cnn")
  # A graph that rank 1 alone cannot read ends both ranks with rank 1's error
  hgr_mpi_cli_hosts_test(NAME mpi_cli_place_load_fails_on_one_rank EXIT 1 ARGS ${place_args}
    ARGS_1 place examples/no-such-graph.json --devices r0/pocl:0,r1/pocl:1 -o ${mpi_placed}-never.json
    PASS "hgr \\(rank 0\\): .*rank 1: loading the graph: .*examples/no-such-graph.json")
  # Three ranks on one host measure their devices one after another
  hgr_mpi_cli_test(NAME mpi_cli_place_turns_on_one_host RANKS 3 ARGS place examples/cnn.json --params examples/cnn.params
    --devices r0/pocl:0,r1/pocl:0,r2/pocl:1 --place stages:3 -o ${mpi_placed}-turns.json
    PASS "rank 1: measuring its devices in turn 1 of 2.*rank 2: measuring its devices in turn 2 of 2|rank 2: measuring its devices in turn 2 of 2.*rank 1: measuring its devices in turn 1 of 2")
  # `hgr tune` times this host's devices in one process
  hgr_mpi_cli_test(NAME mpi_cli_tune_refused RANKS 2 EXIT 2 ARGS tune examples/cnn.json --params examples/cnn.params
    PASS "hgr tune: runs in one process")
  # 311 nodes, params and two inputs over three ranks in three stages
  hgr_mpi_cli_test(NAME mpi_cli_large_stages3 RANKS 3 ARGS run examples/large.json --params examples/large.params
    --input x_small=examples/large_x_small.npy --input x_big=examples/large_x_big.npy
    --expect 0=examples/large_expected_0.npy --expect 1=examples/large_expected_1.npy
    --devices r0/pocl:0,r1/pocl:1,${rank2} --place stages:3 --repeat 2
    PASS "output 0 .*matches.*output 1 .*matches")
  # An error on one rank ends every rank with it, naming that rank
  hgr_mpi_cli_test(NAME mpi_cli_error_on_one_rank RANKS 2 EXIT 1 ARGS run examples/duplex.json ${duplex_inputs}
    --device 4=r0/pocl:0 --device 1=r1/oclgrind:0
    PASS "hgr \\(rank 0\\): INVALID_ARGUMENT: rank 1: .*host-driven.*hgr \\(rank 1\\)|hgr \\(rank 1\\): INVALID_ARGUMENT: rank 1: .*host-driven.*hgr \\(rank 0\\): INVALID_ARGUMENT: rank 1:")
  # An input missing on one rank (E lives on rank 1): every rank ends with that error
  # instead of rank 0 waiting for rank 1's values
  hgr_mpi_cli_test(NAME mpi_cli_input_missing_on_one_rank RANKS 2 EXIT 1 ARGS run examples/duplex.json
    --input A=examples/duplex_A.npy --input B=examples/duplex_B.npy --input C=examples/duplex_C.npy
    --input D=examples/duplex_D.npy --device 4=r0/pocl:0 --device 1=r1/pocl:1
    PASS "hgr \\(rank 0\\): INVALID_ARGUMENT: rank 1: setting the inputs: input 4 'E' is neither given")
  # --dump steps one node at a time in one process
  hgr_mpi_cli_test(NAME mpi_cli_dump_refused RANKS 2 EXIT 2 ARGS run ${cnn_inputs} --dump /tmp/never
    PASS "--dump steps one node at a time in one process")
endif()
