#!/usr/bin/env bash
# hgr setup: installs what is missing (Debian 12), configures, builds, and then runs
# the main job (`demo`) or the whole test suite (`test`). Idempotent: a second run
# installs nothing and rebuilds only what changed.
#
#   scripts/setup.sh demo    the example heterogeneous graph on the devices found
#                            (extra arguments go to `hgr run`, e.g. --device 5=oclgrind:0),
#                            then an ONNX model (squeezenet) placed over them by hgr
#   scripts/setup.sh test    every test (normal build, the Python package, then an
#                            ASan+UBSan build)
#
# Environment: BUILD_DIR (default build), HGR_SANITIZE_BUILD_DIR (default
# build-asan), HGR_SKIP_SANITIZE=1 to run only the normal build's tests.
# The ONNX model tests and the demo's model use a venv in the build directory
# ($BUILD_DIR/onnx-venv) with pinned onnx, onnxruntime and numpy from PyPI; the
# Python package's tests another ($BUILD_DIR/python-venv), the same pins plus pytest
# and scikit-build-core.
set -euo pipefail

# say TEXT: a stage of this script, with the time since it started
say() { printf 'hgr setup [%d:%02d]: %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

mode="${1:-}"
shift || true
case "$mode" in
  demo|test) ;;
  *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

packages=(gcc clang libclang-rt-14-dev make cmake pkg-config ocl-icd-opencl-dev opencl-headers libcjson-dev
          libcmocka-dev pocl-opencl-icd mesa-opencl-icd oclgrind python3 libprotobuf-c-dev protobuf-c-compiler
          libonnx-dev libonnx-testdata python3-venv python3-dev libopenmpi-dev openmpi-bin iproute2)
source scripts/packages.sh
mapfile -t missing < <(missing_packages "${packages[@]}")
if ((${#missing[@]})); then
  line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ "$(id -u)" != 0 ]]; then
    echo "hgr setup: missing packages. Run as root:" >&2
    echo "  apt-get update && $line" >&2
    exit 1
  fi
  say "installing ${missing[*]}"
  apt_install "hgr setup" "${missing[@]}"
fi

werror=OFF
[[ "${CI:-}" == true ]] && werror=ON

# Configures every time, also over an existing build directory, so that its cache
# follows this run: HGR_WERROR is ON exactly when CI=true, and the caller's options
# (the sanitizer build's) hold too. A cached OFF from an earlier local run can then
# never let a CI build through with warnings.
build() { # build <dir> [cmake args...]
  local dir="$1"; shift
  cmake -S . -B "$dir" -DHGR_WERROR="$werror" "$@" >/dev/null
  local cached
  cached="$(sed -n 's/^HGR_WERROR:[A-Z]*=//p' "$dir/CMakeCache.txt")"
  if [[ "$cached" != "$werror" ]]; then
    echo "hgr setup: $dir/CMakeCache.txt has HGR_WERROR=$cached, wanted $werror" >&2
    exit 1
  fi
  say "building $dir (a few minutes the first time, seconds after)"
  local start=$SECONDS
  # CMake's progress as one line of percentages: its full output only on failure
  if ! cmake --build "$dir" -j2 2>&1 | progress "$dir/build.log"; then
    echo
    say "the build failed; building again with -j1 to show the first error:"
    cmake --build "$dir" -j1
  fi
  say "built $dir in $((SECONDS - start)) s"
}

# progress LOG: keeps stdin in LOG and prints "10% 20% ..." as CMake's [NN%] lines pass
# each tenth; the exit status is cmake's (pipefail).
progress() {
  awk -v log_file="$1" '{ print > log_file }
    /^\[ *[0-9]+%\]/ { p = substr($0, 2, index($0, "%") - 2) + 0
                        if (p >= next_p) { printf "%d%% ", p; fflush(); next_p = p - p % 10 + 10 } }
    END { printf "\n" }'
}

# The test bed (testbed_env <build dir>)
source scripts/testbed_env.sh

# The venv for the ONNX model-zoo models (the `onnx` wheel ships them) and ONNX
# Runtime to compare with; pinned, so that expected outputs and timings stay
# comparable. Made once; remade when the pins change. Found by CMake in the build
# directory (HGR_ONNX_PYTHON); without it the model tests report skipped.
onnx_pins=(onnx==1.17.0 onnxruntime==1.32.0 numpy==2.4.6)
onnx_venv() { # onnx_venv <build dir>
  local venv="$1/onnx-venv"
  local want="${onnx_pins[*]}"
  if [[ -f "$venv/pins" && "$(cat "$venv/pins")" == "$want" ]]; then
    return 0
  fi
  say "making $venv (${onnx_pins[*]}; a minute or two)"
  rm -rf "$venv"
  mkdir -p "$1"
  # No network is no reason to stop the build: the model tests then say skipped.
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "${onnx_pins[@]}"; then
    echo "$want" >"$venv/pins"
  else
    echo "hgr setup: warning: could not make $venv; the ONNX model tests will be skipped" >&2
    rm -rf "$venv"
  fi
}

build_dir="${BUILD_DIR:-build}"
onnx_venv "$build_dir"
build "$build_dir"

if [[ "$mode" == demo ]]; then
  # The main job: the large example graph (306 op nodes over device keys 1, 4 and 5,
  # 66 of them copies) and the small CNN (conv, pool, dense and softmax over keys 1 and 4)
  # on the devices found, with TVM's default key bindings, each checked against its
  # expected outputs, with per-device times from profiling events; then the CNN
  # placed by hgr itself (its own device keys discarded) over every real device found:
  # conv2d on the second by a rule, the rest by the cost model (`auto`), with the
  # placement summary and predicted beside measured device times.
  testbed_env "$build_dir"
  hgr="$build_dir/tools/hgr"
  echo "== hgr devices"
  "$hgr" devices
  echo
  echo "(rusticl may print \"MESA: warning: Treating load_kernel_arg in control flow as uniform\": harmless here,"
  echo " OpenCL kernel arguments are the same for every work-item; README, \"The test bed\")"
  echo
  echo "== hgr run examples/large.json (3 runs)"
  "$hgr" run examples/large.json --params examples/large.params \
    --input x_small=examples/large_x_small.npy --input x_big=examples/large_x_big.npy \
    --expect 0=examples/large_expected_0.npy --expect 1=examples/large_expected_1.npy \
    --repeat 3 --profile "$@"
  echo
  echo "== hgr run examples/cnn.json (3 runs)"
  "$hgr" run examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy \
    --expect 0=examples/cnn_expected_0.npy --repeat 3 --profile
  echo
  echo "== hgr run examples/cnn.json placed by hgr: conv2d on the second device, the rest by cost (3 runs)"
  devices="$("$hgr" devices | awk 'NR > 1 && NF == 0 {exit} NR > 1 && $1 !~ /^oclgrind/ {print $1}' | paste -sd, -)"
  second="$(printf '%s' "$devices" | cut -d, -f2)"
  "$hgr" run examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy \
    --expect 0=examples/cnn_expected_0.npy --devices "$devices" --place "op:conv2d=${second:-${devices%%,*}}" \
    --place auto --repeat 3 --profile
  # Across processes (docs/distributed.md): the same CNN over two MPI ranks on this
  # machine, one pipeline stage each, copies between them through MPI, runs pipelined.
  if [[ -d "$build_dir/mpi" ]] && command -v mpirun >/dev/null; then # built with libhgr_mpi
    echo
    echo "== mpirun -np 2 hgr run examples/cnn.json over r0/pocl:0 and r1/pocl:0 (stages:2, 20 runs, 2 in flight)"
    mpirun --allow-run-as-root --oversubscribe -np 2 "$hgr" run examples/cnn.json --params examples/cnn.params \
      --input x=examples/cnn_x.npy --expect 0=examples/cnn_expected_0.npy --devices r0/pocl:0,r1/pocl:0 \
      --place stages:2 --repeat 20 --pipeline 2
  fi
  # An ONNX model-zoo architecture (SqueezeNet 1.0, 26 convolutions; its weights are
  # ConstantOfShape fills that the loader folds) placed by the cost model over the same
  # devices, checked against ONNX's expected output at ONNX's tolerance, with the
  # per-device time of the last run.
  echo
  echo "== hgr run squeezenet.onnx placed by hgr over $devices (auto, 3 runs)"
  models="$build_dir/tests/onnx-models"
  say "preparing squeezenet in $models (its input and expected output; seconds, once)"
  python3 scripts/onnx_models.py prepare-or-skip "$build_dir/onnx-venv/bin/python" "$models" squeezenet || true
  python3 scripts/onnx_models.py run "$models" squeezenet zoo "$hgr" \
    --devices "$devices" --place auto --repeat 3 --profile
  # Last, a real model with real weights on a real input: PaddleOCR's PP-OCRv4 text
  # detector and recognizer from the pinned rapidocr_onnxruntime wheel reading a
  # photographed page (scikit-image's page.png), each checked against ONNX Runtime,
  # and the text they read (scripts/ocr_demo.py; its wheels are downloaded once).
  echo
  first="${devices%%,*}"
  echo "== text read from a page by PP-OCRv4's detector and recognizer (rapidocr_onnxruntime 1.4.4) on ${first:-the default device}"
  if [[ ! -x "$build_dir/onnx-venv/bin/python" ]]; then
    echo "skipped: no $build_dir/onnx-venv (it could not be made: no network?)"
    exit 0
  fi
  code=0
  "$build_dir/onnx-venv/bin/python" scripts/ocr_demo.py "$hgr" "$build_dir/demo-ocr" \
    ${first:+--device "0=$first"} --repeat 3 || code=$?
  [[ "$code" -eq 0 || "$code" -eq 77 ]] || exit "$code"
  exit 0
fi

say "tests ($build_dir): 7-13 minutes on 2 cores; CTest prints each test as it ends"
ctest --test-dir "$build_dir" --output-on-failure -j2

# The Python package (python/): its own venv with the ONNX pins plus pytest and
# scikit-build-core, made once and remade when the pins change; then, every run,
# `pip install ./python` into it (the proof that the package builds and installs on
# a fresh machine; its CMake build folder is kept in $build_dir/python-build, so a
# second run rebuilds only what changed) and its tests on the test bed. Without
# network there is no venv: the Python tests are then reported skipped, never passed.
# ml_dtypes: ONNX Runtime's quantization tool imports it (python/tests/test_quantized_models.py).
python_pins=("${onnx_pins[@]}" pytest==9.2.0 scikit-build-core==1.1.2 ml_dtypes==0.6.0)
python_venv() { # python_venv <build dir>; fails when the venv cannot be made
  local venv="$1/python-venv"
  local want="${python_pins[*]}"
  if [[ -f "$venv/pins" && "$(cat "$venv/pins")" == "$want" ]]; then
    return 0
  fi
  say "making $venv (${python_pins[*]}; a minute or two)"
  rm -rf "$venv"
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "${python_pins[@]}"; then
    echo "$want" >"$venv/pins"
  else
    rm -rf "$venv"
    return 1
  fi
}
# Real models that PyPI packages ship inside their wheels, pinned by version and
# sha256, downloaded once into $build_dir/real-models for the Python tests that call
# them as their own libraries call ONNX Runtime (python/tests/test_real_models.py).
# Without network the tests say skipped.
real_model_wheels=(
  "silero-vad==5.1.2 silero_vad-5.1.2-py3-none-any.whl 93b41953d7774b165407fda6b533c119c5803864e367d5034dc626c82cfdf661"
  "rapidocr_onnxruntime==1.4.4 rapidocr_onnxruntime-1.4.4-py3-none-any.whl 971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"
  "g2p_id_py==0.4.2 g2p_id_py-0.4.2-py3-none-any.whl 0b9ce7e76be2e8d1738c604751d05e0a8aa1b2ce2199fce27a115d350468e671"
  "ddddocr==1.5.6 ddddocr-1.5.6-py3-none-any.whl f13865b00e42de5c2507c1889ba73c2bacd218a49d15b928c2a5c82667062ac5"
  "openwakeword==0.4.0 openwakeword-0.4.0-py3-none-any.whl 2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075"
)
real_models() { # real_models <build dir> <python>
  local dir="$1/real-models" entry spec wheel sha256
  mkdir -p "$dir"
  for entry in "${real_model_wheels[@]}"; do
    read -r spec wheel sha256 <<<"$entry"
    if [[ ! -f "$dir/$wheel" ]]; then
      say "downloading $spec (pip download, once)"
      "$2" -m pip download -q --no-deps --disable-pip-version-check "$spec" -d "$dir" ||
        echo "hgr setup: warning: could not download $spec (no network?): its tests will be skipped" >&2
    fi
    if [[ -f "$dir/$wheel" ]] && ! echo "$sha256  $dir/$wheel" | sha256sum -c --quiet - >/dev/null 2>&1; then
      echo "hgr setup: warning: $wheel is not the pinned $sha256: removed, its tests will be skipped" >&2
      rm -f "$dir/$wheel"
    fi
  done
}
if python_venv "$build_dir"; then
  real_models "$build_dir" "$build_dir/python-venv/bin/python"
  say "the Python package: pip install ./python (a minute or two), then pytest python/tests (a minute or two)"
  "$build_dir/python-venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
    -Cbuild-dir="$PWD/$build_dir/python-build" -Ccmake.define.HGR_WERROR="$werror" ./python
  (testbed_env "$build_dir" && export HGR_CACHE_DIR="${HGR_CACHE_DIR:-$PWD/$build_dir/python-cache}" &&
    export HGR_REAL_MODELS="$PWD/$build_dir/real-models" &&
    "$build_dir/python-venv/bin/python" -m pytest -q -rs python/tests)
else
  echo "hgr setup: warning: could not make $build_dir/python-venv (no network?): the Python tests are SKIPPED" >&2
fi
if [[ "${HGR_SKIP_SANITIZE:-0}" != 1 ]]; then
  asan_dir="${HGR_SANITIZE_BUILD_DIR:-build-asan}"
  # The model tests use the normal build's venv (one venv, made above).
  build "$asan_dir" -DHGR_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug \
    -DHGR_ONNX_PYTHON="$(cd "$build_dir" && pwd)/onnx-venv/bin/python"
  say "tests under AddressSanitizer and UndefinedBehaviorSanitizer ($asan_dir): about 15 minutes"
  ctest --test-dir "$asan_dir" --output-on-failure -j2
fi

# Test mode, last: the cross-builds (scripts/cross.sh). aarch64 is built with -Werror
# and its tests run under qemu-user, every device test skipped (no OpenCL device under
# emulation); HGR_CROSS=all adds armhf (32-bit) and s390x (big-endian);
# HGR_SKIP_CROSS=1 leaves them out.
if [[ "${HGR_SKIP_CROSS:-0}" != 1 ]]; then
  say "cross-builds and their tests under qemu-user (scripts/cross.sh; a minute or two)"
  scripts/cross.sh "$([[ "${HGR_CROSS:-}" == all ]] && echo all || echo aarch64)"
fi
