# The ONNX model-zoo architectures (issue 15, section 5), from the `onnx` wheel in the
# venv that scripts/setup.sh makes (BUILD/onnx-venv: pinned onnx, onnxruntime, numpy).
#
# onnx_models_prepare (fixture onnx_models) runs scripts/onnx_models.py prepare into
# BUILD/tests/onnx-models: per model the arange input and expected output, and a
# random-weights variant with ONNX Runtime's logits (seconds once prepared, about a
# minute the first time). Without the venv it exits 77 naming what is missing, and so
# does every model test (skipped, never passed). Per model:
#   onnx_model_<name>_pocl             pocl:0, ONNX's expected output (rtol 1e-3, 2e-3
#                                      for densenet121; atol 1e-7)
#   onnx_model_<name>_vs_onnxruntime   random weights and input on pocl:0, against
#                                      ONNX Runtime's logits (rtol 1e-3, atol 1e-4)
#   onnx_model_<name>_auto             --place auto over pocl:0,pocl:1
#   onnx_model_<name>_stages2          --place stages:2 over pocl:0,rusticl:0, for the
#                                      models in HGR_ONNX_STAGES2_MODELS (default all;
#                                      rusticl on llvmpipe calibrates and compiles anew:
#                                      35 s to 3 min a model on 2 cores, see below)
# The sanitizer build (HGR_SANITIZE) registers only _pocl and _vs_onnxruntime of
# HGR_ONNX_SANITIZE_MODELS: the other models add minutes of instrumented host-side
# folding of their weights and nothing the small ones do not exercise.
# Every test has the labels onnx_models and onnx_model_<name>: `ctest -L onnx_models`.
# Measured on the 2-vCPU machine (warm PoCL cache, cold hgr cache): prepare 47 s the
# first time (0.3 s after), _pocl 2-11 s, _vs_onnxruntime 2-18 s, _auto 3-14 s,
# _stages2 15-20 s for squeezenet and shufflenet, 35-180 s for the others (resnet50
# 109 s, vgg19 178 s cold); the 31 tests other than those take 3 minutes. A cold PoCL cache adds up to 30 s
# a model to its first test (inception_v1).
if(NOT HGR_ONNX)
  return()
endif()
set(HGR_ONNX_PYTHON "${CMAKE_BINARY_DIR}/onnx-venv/bin/python" CACHE FILEPATH
    "Python with onnx, onnxruntime and numpy for the ONNX model tests (scripts/setup.sh makes it)")
set(HGR_ONNX_STAGES2_MODELS "all" CACHE STRING
    "Models whose --place stages:2 over pocl:0,rusticl:0 is tested (all: every model)")
set(HGR_ONNX_SANITIZE_MODELS "squeezenet;shufflenet;resnet50" CACHE STRING
    "Models tested in a sanitizer build (_pocl and _vs_onnxruntime only)")

set(HGR_ONNX_MODELS bvlc_alexnet densenet121 inception_v1 inception_v2 resnet50 shufflenet
    squeezenet vgg19 zfnet512)
set(HGR_ONNX_MODELS_DIR "${CMAKE_CURRENT_BINARY_DIR}/onnx-models")
set(HGR_ONNX_MODELS_SCRIPT "${PROJECT_SOURCE_DIR}/scripts/onnx_models.py")

add_test(NAME onnx_models_prepare
  COMMAND "${Python3_EXECUTABLE}" "${HGR_ONNX_MODELS_SCRIPT}" prepare-or-skip "${HGR_ONNX_PYTHON}"
          "${HGR_ONNX_MODELS_DIR}")
set_tests_properties(onnx_models_prepare PROPERTIES
  FIXTURES_SETUP onnx_models SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS onnx_models)

# onnx_model_test(<test name> <model> zoo|random [hgr run options...]): the runner
# shows hgr's output and fails unless hgr exits 0 and says output 0 matches.
function(onnx_model_test test model variant)
  add_test(NAME ${test}
    COMMAND "${Python3_EXECUTABLE}" "${HGR_ONNX_MODELS_SCRIPT}" run "${HGR_ONNX_MODELS_DIR}" ${model} ${variant}
            $<TARGET_FILE:hgr_cli> ${ARGN})
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "${HGR_TEST_ENVIRONMENT}" FAIL_REGULAR_EXPRESSION "${HGR_OCLGRIND_REPORTS}"
    FIXTURES_REQUIRED "testbed;onnx_models" SKIP_RETURN_CODE 77 TIMEOUT 600
    LABELS "onnx_models;onnx_model_${model}" WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
endfunction()

if(TARGET hgr_cli)
  foreach(model IN LISTS HGR_ONNX_MODELS)
    if(HGR_SANITIZE AND NOT model IN_LIST HGR_ONNX_SANITIZE_MODELS)
      continue()
    endif()
    onnx_model_test(onnx_model_${model}_pocl ${model} zoo --devices pocl:0)
    onnx_model_test(onnx_model_${model}_vs_onnxruntime ${model} random --devices pocl:0)
    if(HGR_SANITIZE)
      continue()
    endif()
    onnx_model_test(onnx_model_${model}_auto ${model} zoo --devices pocl:0,pocl:1 --place auto)
    if(model IN_LIST HGR_ONNX_STAGES2_MODELS OR HGR_ONNX_STAGES2_MODELS STREQUAL "all")
      onnx_model_test(onnx_model_${model}_stages2 ${model} zoo --devices pocl:0,rusticl:0 --place stages:2)
    endif()
  endforeach()
endif()

# Model-zoo architectures split over MPI ranks (docs/distributed.md): hgr under
# mpirun, placed in pipeline stages on rank 0's and the other ranks' pocl devices,
# with pipelined runs, against ONNX's expected output like the rest.
if(TARGET hgr_cli AND TARGET hgr_mpi_static AND NOT HGR_SANITIZE)
  set(launch "${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe -np")
  foreach(split IN ITEMS "squeezenet;2" "squeezenet;3" "shufflenet;2")
    list(GET split 0 model)
    list(GET split 1 ranks)
    set(devices r0/pocl:0,r1/pocl:1)
    if(ranks EQUAL 3)
      set(devices r0/pocl:0,r1/pocl:1,r2/pocl:0)
    endif()
    onnx_model_test(onnx_model_${model}_mpi_stages${ranks} ${model} zoo --devices ${devices} --place stages:${ranks}
                    --repeat 6 --pipeline 2)
    set_property(TEST onnx_model_${model}_mpi_stages${ranks} PROPERTY ENVIRONMENT
                 ${HGR_MPI_TEST_ENVIRONMENT} "HGR_MODEL_LAUNCHER=${launch} ${ranks}")
  endforeach()
endif()
