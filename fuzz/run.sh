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
#     under BUILD_DIR/artifacts), 0 otherwise. Prints libFuzzer's "Done N runs".
set -u

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
  exe="$build/hgr_fuzz_$target"
  [ -x "$exe" ] || { echo "$exe is missing: the fuzz_build test did not build it"; exit 1; }
  corpus="$build/corpus/$target" seeds="$build/seeds/$target" artifacts="$build/artifacts"
  rm -rf "$seeds"
  mkdir -p "$corpus" "$seeds" "$artifacts"
  for seed in "$@"; do cp "$seed" "$seeds/"; done
  set -- "$corpus" "$seeds"
  [ -d "$source/fuzz/corpus/$target" ] && set -- "$@" "$source/fuzz/corpus/$target"
  dict="$source/fuzz/dict/$target.dict"
  [ -f "$dict" ] && set -- "-dict=$dict" "$@"
  log="$build/$target.log"
  # libFuzzer's own exit code for a finding is 77, which CTest would take for a skip.
  "$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -error_exitcode=1 \
    -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$@" >"$log" 2>&1
  rc=$?
  grep -E '^(INFO: seed corpus|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$log"
  if [ "$rc" -ne 0 ]; then
    tail -n 80 "$log"
    echo "hgr_fuzz_$target found a defect (exit $rc); input saved as $artifacts/$target-*; full log $log"
    exit 1
  fi
  echo "hgr_fuzz_$target: no findings in ${seconds}s; corpus $(ls "$corpus" | wc -l) inputs"
  ;;
*)
  echo "usage: run.sh build CLANG SOURCE_DIR BUILD_DIR WERROR | fuzz BUILD_DIR TARGET SECONDS SOURCE_DIR [SEED...]" >&2
  exit 2
  ;;
esac
