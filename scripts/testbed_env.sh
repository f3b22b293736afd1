# Sourced by scripts/setup.sh and the benchmarks (bench/run.sh, bench/onnx.sh,
# bench/onnx_startup.sh), from the repository root.
#
# testbed_env <build dir>: the test bed, every system ICD plus Oclgrind
# (tests/testbed.cmake writes the vendors directory), rusticl on llvmpipe, and two
# PoCL devices whose worker threads are pinned to the CPUs: unpinned, a process's
# runs switch between a fast and a slow regime as the scheduler moves the workers
# (squeezenet on pocl:0, runs 1-12 of one process: 14.0 10.7 10.9 10.5 7.7 9.7 7.0
# 6.5 ... 6.4 ms unpinned, 8.7 6.5 6.4 ... 6.5 ms pinned; resnet50 the same either
# way). A caller's own settings win.
# The build directory may be relative to the root or absolute.
testbed_env() {
  local vendors="$1/testbed/vendors"
  [[ "$vendors" == /* ]] || vendors="$PWD/$vendors"
  cmake -DDIR="$vendors" -P tests/testbed.cmake >/dev/null
  export OCL_ICD_VENDORS="${OCL_ICD_VENDORS:-$vendors}"
  export RUSTICL_ENABLE="${RUSTICL_ENABLE:-llvmpipe}"
  export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
  export POCL_AFFINITY="${POCL_AFFINITY:-1}"
}
