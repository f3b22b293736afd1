# Sourced, from the repository root, by the benches that time hgr.InferenceSession
# beside ONNX Runtime in one Python process (bench/shapes.sh, bench/recurrent.sh,
# bench/transformer.sh).
#
# python_bench_begin NAME: sets python (PYTHON, default build/python-venv/bin/python),
#   output (OUTPUT, default docs/benchmarks.md; "-" prints only), device (DEVICE,
#   default pocl:0), build_dir (BUILD_DIR, default build), results
#   ($build_dir/bench-results), work (a temporary folder removed at exit), started
#   and before (the time and load average at the start); exits 2 when the venv lacks
#   hgr, onnx or onnxruntime; sets up the test bed's OpenCL environment.
# python_bench_end NAME AFTER: prints $results/NAME.md (OUTPUT "-") or splices it into
#   $output after bench/AFTER.sh's section.
# openvino_peer: installs OpenVINO at its pinned version into the venv where it is not
#   (bench/peers.py: a peer in the tables of bench/real_models.sh, tiny_models.sh and
#   transformer.sh, which call this after python_bench_begin); without network the
#   tables say "not installed".
# loadavg: the load average as "1, 5, 15".
loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }

openvino_pin=2026.4.1
openvino_peer() {
  if ! "$python" -c "import importlib.metadata as m, sys; sys.exit(m.version('openvino') != '$openvino_pin')" 2>/dev/null; then
    echo "bench: installing openvino==$openvino_pin into $python's venv (once; a peer in the tables)" >&2
    "$python" -m pip install -q --disable-pip-version-check "openvino==$openvino_pin" ||
      echo "bench: warning: could not install openvino: its columns say not installed" >&2
  fi
}

python_bench_begin() {
  python="${PYTHON:-build/python-venv/bin/python}"
  output="${OUTPUT:-docs/benchmarks.md}"
  device="${DEVICE:-pocl:0}"
  build_dir="${BUILD_DIR:-build}"
  if ! "$python" -c 'import hgr, onnxruntime, onnx' 2>/dev/null; then
    echo "bench/$1.sh: $python lacks hgr, onnx or onnxruntime: run scripts/setup.sh test (it installs the package), or set PYTHON" >&2
    exit 2
  fi
  source scripts/testbed_env.sh
  testbed_env "$build_dir"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  results="$build_dir/bench-results"
  mkdir -p "$results"
  started="$(date -u '+%Y-%m-%d %H:%M UTC')" before="$(loadavg)"
}

python_bench_end() {
  if [[ "$output" == - ]]; then
    cat "$results/$1.md"
  else
    python3 bench/splice_section.py "$output" "$results/$1.md" "$1" "$2"
    echo "bench/$1.sh: wrote the section into $output (and $results/$1.md)"
  fi
}
