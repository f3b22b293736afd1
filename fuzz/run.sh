#!/bin/sh
# CTest's side of the fuzz targets (fuzz/tests.cmake registers the entries).
#
#   run.sh build CLANG SOURCE_DIR BUILD_DIR WERROR
#     Configures and builds this directory's project in BUILD_DIR with CLANG. When
#     CLANG is missing or cannot link a libFuzzer target, writes why to
#     BUILD_DIR/skipped and exits 77 (CTest: skipped).
#   run.sh fuzz BUILD_DIR TARGET SECONDS SOURCE_DIR [SEED...]
#     Runs hgr_fuzz_TARGET for SECONDS on BUILD_DIR/corpus/TARGET (kept between
#     runs; new inputs go there), fuzz/corpus/TARGET and the SEED files, with
#     fuzz/dict/TARGET.dict. Exits 77 when the build was skipped, 1 on any finding
#     (crash, sanitizer report, leak, timeout, out of memory; the input is saved
#     under BUILD_DIR/artifacts), 0 otherwise. Prints a summary (runs, exec/s,
#     cov/ft, corpus size).
#   run.sh campaign BUILD_DIR TARGET SECONDS SOURCE_DIR [SEED...]
#     The same for a long run by hand (README.md, "Long campaigns"): the corpus is
#     BUILD_DIR/campaign/TARGET, kept between campaigns, the log
#     BUILD_DIR/campaign/TARGET.log, findings go under BUILD_DIR/campaign/artifacts.
#     Extra libFuzzer flags come from $HGR_FUZZ_FLAGS (-max_len=..., -jobs=...).
set -u

# The numbers of a run from its log: executions and exec/s from the final stats,
# coverage (cov: edges, ft: features) and corpus from libFuzzer's last status line.
summary() {
  exe="$1" log="$2" corpus="$3"
  status=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
  # -fork=N prints no final stats: its last status line has the runs and the speed.
  [ -n "$runs" ] || runs=$(echo "$status" | sed -nE 's/^#([0-9]+).*$/\1/p')
  [ -n "$speed" ] || speed=$(echo "$status" | sed -nE 's/^.*exec\/s:? ([0-9]+).*$/\1/p')
  cov=$(echo "$status" | sed -nE 's/^.*(cov: [0-9]+ ft: [0-9]+).*$/\1/p')
  echo "$(basename "$exe"): ${runs:-?} runs, ${speed:-?} exec/s, ${cov:-cov: ? ft: ?}," \
    "${new:-?} new inputs, corpus $(find "$corpus" -type f | wc -l) inputs in $corpus"
}

# run_target BUILD_DIR TARGET SECONDS SOURCE_DIR CORPUS ARTIFACTS LOG [SEED...]
run_target() {
  build="$1" target="$2" seconds="$3" source="$4" corpus="$5" artifacts="$6" log="$7"
  shift 7
  exe="$build/hgr_fuzz_$target"
  [ -x "$exe" ] || { echo "$exe is missing: the fuzz_build test did not build it"; exit 1; }
  seeds="$(dirname "$artifacts")/seeds/$target"
  rm -rf "$seeds"
  mkdir -p "$corpus" "$seeds" "$artifacts"
  # Seeds of ONNX's node tests are all model.onnx: name each copy after its folder.
  for seed in "$@"; do cp "$seed" "$seeds/$(basename "$(dirname "$seed")")-$(basename "$seed")"; done
  set -- "$corpus" "$seeds"
  [ -d "$source/fuzz/corpus/$target" ] && set -- "$@" "$source/fuzz/corpus/$target"
  dict="$source/fuzz/dict/$target.dict"
  [ -f "$dict" ] && set -- "-dict=$dict" "$@"
  touch "$log.start"
  # libFuzzer's own exit code for a finding is 77, which CTest would take for a skip.
  # shellcheck disable=SC2086 # HGR_FUZZ_FLAGS is a list of flags
  "$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -error_exitcode=1 \
    -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" ${HGR_FUZZ_FLAGS:-} \
    "$@" >"$log" 2>&1
  rc=$?
  # With -fork=N -ignore_crashes=1 libFuzzer exits 0 after findings: count its artifacts.
  found=$(find "$artifacts" -name "$target-*" -newer "$log.start" | sort)
  rm -f "$log.start"
  [ "$rc" -eq 0 ] && [ -n "$found" ] && rc=1
  grep -E '^(INFO: seed corpus|Done [0-9]+ runs|stat::peak_rss_mb)' "$log"
  summary "$exe" "$log" "$corpus"
  if [ "$rc" -ne 0 ]; then
    tail -n 80 "$log"
    echo "hgr_fuzz_$target found a defect (exit $rc); inputs saved: $(echo "$found" | tr '\n' ' ')($artifacts/$target-*); full log $log"
    exit 1
  fi
  echo "hgr_fuzz_$target: no findings in ${seconds}s"
}

skip() {
  mkdir -p "$build"
  echo "$1" >"$build/skipped"
  echo "SKIPPED: $1"
  exit 77
}

mode="$1"
shift
case "$mode" in
build)
  cc="$1" source="$2" build="$3" werror="$4"
  rm -f "$build/skipped"
  command -v "$cc" >/dev/null 2>&1 || skip "no clang found (install clang for the fuzz targets)"
  mkdir -p "$build/probe"
  printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n);\n%s\n' \
    'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }' \
    >"$build/probe/probe.c"
  "$cc" -fsanitize=fuzzer,address,undefined "$build/probe/probe.c" -o "$build/probe/probe" \
    >"$build/probe/log" 2>&1 ||
    skip "$cc cannot link a libFuzzer target with -fsanitize=fuzzer,address,undefined: $(head -c 300 "$build/probe/log")"
  cmake -S "$source/fuzz" -B "$build" -DCMAKE_C_COMPILER="$cc" -DHGR_WERROR="$werror" >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log"
    exit 1
  }
  # Quiet when it works; the compiler's words when it does not.
  cmake --build "$build" -j2 >"$build/build.log" 2>&1 || {
    cat "$build/build.log"
    exit 1
  }
  echo "fuzz targets built in $build with $cc"
  ;;
fuzz)
  build="$1" target="$2" seconds="$3" source="$4"
  shift 4
  [ -f "$build/skipped" ] && { echo "SKIPPED: $(cat "$build/skipped")"; exit 77; }
  run_target "$build" "$target" "$seconds" "$source" "$build/corpus/$target" "$build/artifacts" "$build/$target.log" "$@"
  ;;
campaign)
  build="$1" target="$2" seconds="$3" source="$4"
  shift 4
  run_target "$build" "$target" "$seconds" "$source" "$build/campaign/$target" "$build/campaign/artifacts" \
    "$build/campaign/$target.log" "$@"
  ;;
*)
  echo "usage: run.sh build CLANG SOURCE_DIR BUILD_DIR WERROR | {fuzz|campaign} BUILD_DIR TARGET SECONDS SOURCE_DIR [SEED...]" >&2
  exit 2
  ;;
esac
