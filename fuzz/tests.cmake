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
# Small models of ONNX's node tests (Debian's libonnx-testdata).
set(fuzz_onnx_seeds "")
foreach(test conv_with_strides_padding add_bcast reshape_negative_dim slice gather_0 concat_2d_axis_0 softmax_axis_1
             maxpool_2d_pads batchnorm_epsilon gemm_all_attributes matmul_3d constantofshape_float_ones unsqueeze_axis_0
             clip_default_min cast_FLOAT_to_INT32 range_float_type_positive_delta_expanded)
  if(EXISTS "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
    list(APPEND fuzz_onnx_seeds "/usr/share/libonnx-testdata/data/node/test_${test}/model.onnx")
  endif()
endforeach()

set(fuzz_targets graph op_plan params npy device_spec kernel_manifest place rank_measure tune)
if(HGR_ONNX)
  list(APPEND fuzz_targets onnx)
endif()
foreach(target ${fuzz_targets})
  add_test(NAME fuzz_${target}
           COMMAND ${fuzz_run} fuzz "${fuzz_dir}" ${target} ${HGR_FUZZ_SECONDS} "${PROJECT_SOURCE_DIR}"
                   ${fuzz_${target}_seeds})
  set_tests_properties(fuzz_${target} PROPERTIES
    FIXTURES_REQUIRED fuzz SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1;TMPDIR=${CMAKE_CURRENT_BINARY_DIR}/tmp")
endforeach()
