# Fuzzing (issue 8), included from tests/tests.cmake. fuzz_build configures and
# builds fuzz/ (its own project) with clang in <build>/fuzz; each fuzz_<target>
# then runs one libFuzzer target for HGR_FUZZ_SECONDS on its seeds: the test data
# named below (referenced, not copied into the source tree), fuzz/corpus/<target>
# and what earlier runs found (kept in <build>/fuzz/corpus). A crash, sanitizer
# report, leak or hang fails the entry; without clang and libFuzzer every entry is
# skipped. The build type and HGR_SANITIZE of the main build do not matter here.
find_program(HGR_FUZZ_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14
             DOC "clang for the libFuzzer targets in fuzz/")
set(HGR_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz target runs under CTest")

set(fuzz_dir "${CMAKE_BINARY_DIR}/fuzz")
set(fuzz_run sh "${PROJECT_SOURCE_DIR}/fuzz/run.sh")
add_test(NAME fuzz_build
         COMMAND ${fuzz_run} build "${HGR_FUZZ_CLANG}" "${PROJECT_SOURCE_DIR}" "${fuzz_dir}" "${HGR_WERROR}")
set_tests_properties(fuzz_build PROPERTIES FIXTURES_SETUP fuzz SKIP_RETURN_CODE 77 TIMEOUT 1200)

file(GLOB fuzz_graph_seeds "${PROJECT_SOURCE_DIR}/examples/*.json" "${HGR_TEST_DATA_DIR}/graphs/*.json"
     "${HGR_TEST_DATA_DIR}/user_kernels/graph.json")
file(GLOB fuzz_params_seeds "${PROJECT_SOURCE_DIR}/examples/*.params")
# Small arrays only: libFuzzer sizes its inputs after the largest seed.
file(GLOB fuzz_all_npy "${PROJECT_SOURCE_DIR}/examples/*.npy")
set(fuzz_npy_seeds "")
foreach(npy ${fuzz_all_npy})
  file(SIZE "${npy}" npy_size)
  if(npy_size LESS 65536)
    list(APPEND fuzz_npy_seeds "${npy}")
  endif()
endforeach()
set(fuzz_kernel_manifest_seeds "${HGR_TEST_DATA_DIR}/user_kernels/kernels.json")
set(fuzz_op_plan_seeds "")
set(fuzz_device_spec_seeds "")
set(fuzz_place_seeds "")
set(fuzz_rank_measure_seeds "")
set(fuzz_tune_seeds "")
set(fuzz_bundle_seeds "")
# Small models of ONNX's node tests (Debian's libonnx-testdata): at least one for each
# op the loader imports (runtime/onnx/onnx_import_*.c), If, Loop and Scan among them
# (one load refuses test_if's and test_loop11's conditions and trip counts, graph
# inputs; fuzz/corpus/onnx/control-*.onnx reach the subgraphs' import: If on a
# constant, a Loop with a nested If, a while loop, a reversed Scan), sequences,
# LSTM, and the ops that end a stage (NonZero, Compress, Unique, NonMaxSuppression;
# the target imports every model in stages too). The structure-aware mutator
# (onnx_mutator.c) works from these.
set(fuzz_onnx_seeds "")
foreach(test conv_with_strides_padding add_bcast reshape_negative_dim slice gather_0 concat_2d_axis_0 softmax_axis_1
             maxpool_2d_pads batchnorm_epsilon gemm_all_attributes matmul_3d constantofshape_float_ones unsqueeze_axis_0
             clip_default_min cast_FLOAT_to_INT32 range_float_type_positive_delta_expanded
             averagepool_2d_pads_count_include_pad convtranspose_1d einsum_batch_matmul elu_default expand_dim_unchanged
             flatten_default_axis gather_elements_0 globalaveragepool globalmaxpool hardsigmoid_default hardswish
             instancenorm_example isinf isnan lrn_default layer_normalization_2d_axis1 leakyrelu_default
             logsoftmax_example_1 max_one_input mean_one_input mod_uint8 pow_example prelu_broadcast
             reduce_l1_default_axes_keepdims_random reduce_log_sum_exp_default_axes_keepdims_random
             reduce_sum_keepdims_random reduce_mean_default_axes_keepdims_random resize_upsample_sizes_cubic
             resize_downsample_scales_linear selu_default shape size spacetodepth depthtospace_crd_mode
             split_equal_parts_2d squeeze tile_precomputed top_k transpose_default upsample_nearest where_example
             xor_bcast3v1d not_2d greater_equal_bcast less_equal_bcast equal_bcast cumsum_1d dropout_default_old erf
             argmax_default_axis_example argmin_keepdims_example identity_sequence edge_pad reflect_pad constant_pad
             constant sum_one_input div_example sign round softplus_example sqrt_example cast_DOUBLE_to_FLOAT
             acosh_example if loop11 scan_sum scan9_sum if_seq loop13_seq range_int32_type_negative_delta_expanded
             lstm_defaults nonzero_example compress_0 unique_sorted_with_axis nonmaxsuppression_two_classes)
  if(EXISTS "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
    list(APPEND fuzz_onnx_seeds "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
  endif()
endforeach()
# Three of the model zoo's "light" models of the onnx wheel (scripts/setup.sh puts it
# in <build>/onnx-venv): whole networks, 16 to 68 KB. Not the others, though all are
# under 1 MiB (libFuzzer sizes its inputs after the largest seed): their weights are
# ConstantOfShape nodes that the loader materializes, 0.6 to 4 s per execution under
# the sanitizers, which would leave the 10 s runs nothing but seed loading. A long
# campaign can add the whole folder (README.md).
foreach(model squeezenet shufflenet inception_v1)
  file(GLOB light_model
       "${CMAKE_BINARY_DIR}/onnx-venv/lib/python3*/site-packages/onnx/backend/test/data/light/light_${model}.onnx")
  list(APPEND fuzz_onnx_seeds ${light_model})
endforeach()

# The model object (fuzz_model.c): the symbolic models as whole files, each asked for
# at its declared shapes; corpus/model/ adds request sequences for them and for node
# tests whose inputs decide shapes (written by make_model_seeds.py).
file(GLOB fuzz_model_seeds "${HGR_TEST_DATA_DIR}/symbolic/*.onnx")
# ... and If and Loop whose condition and trip count are graph inputs, which the model
# object specializes on by value
foreach(test if loop11)
  if(EXISTS "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
    list(APPEND fuzz_model_seeds "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
  endif()
endforeach()

set(fuzz_targets graph op_plan params npy device_spec kernel_manifest place rank_measure tune bundle)
if(HGR_ONNX)
  list(APPEND fuzz_targets onnx model)
endif()
foreach(target ${fuzz_targets})
  add_test(NAME fuzz_${target}
           COMMAND ${fuzz_run} fuzz "${fuzz_dir}" ${target} ${HGR_FUZZ_SECONDS} "${PROJECT_SOURCE_DIR}"
                   ${fuzz_${target}_seeds})
  set_tests_properties(fuzz_${target} PROPERTIES
    FIXTURES_REQUIRED fuzz SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1;TMPDIR=${CMAKE_CURRENT_BINARY_DIR}/tmp")
endforeach()
