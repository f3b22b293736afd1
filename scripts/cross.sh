#!/usr/bin/env bash
# hgr cross-builds: installs what is missing (Debian 12: the cross compiler, the
# target's libraries through multiarch, qemu-user), configures build-cross-TARGET with
# cmake/toolchains/<triplet>.cmake and -Werror, builds, and runs the tests under
# qemu-user (CTest's CMAKE_CROSSCOMPILING_EMULATOR). Prints the test counts and the
# time of each step.
#
#   scripts/cross.sh aarch64|armhf|s390x|all
#
# Under qemu there is no OpenCL device (the host's drivers are x86-64 libraries and
# PoCL for another architecture does not install beside the host's): every test that
# needs one reports skipped, every other test must pass. Not in the cross build:
# fuzzing (host clang), the ONNX model zoo (host Python venv), TSan, the fault walk
# and install_consumer (tests/tests.cmake says why for each).
# Warnings are errors (-DHGR_WERROR=ON) in every cross build. libhgr_mpi is left out
# (-DHGR_MPI=OFF): Debian's Open MPI is the host's, and the distributed part is
# tested natively under mpirun (docs/distributed.md).
# Environment: HGR_CROSS_BUILD_PREFIX (default build-cross-).
set -euo pipefail

if (($# != 1)); then
  echo "usage: scripts/cross.sh aarch64|armhf|s390x|all" >&2
  exit 2
fi
case "$1" in
  aarch64|armhf|s390x) targets=("$1") ;;
  all) targets=(aarch64 armhf s390x) ;;
  *) echo "usage: scripts/cross.sh aarch64|armhf|s390x|all" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# target -> Debian architecture, GNU triplet, qemu program
debian_arch() { case "$1" in aarch64) echo arm64 ;; armhf) echo armhf ;; s390x) echo s390x ;; esac; }
triplet() { case "$1" in aarch64) echo aarch64-linux-gnu ;; armhf) echo arm-linux-gnueabihf ;; s390x) echo s390x-linux-gnu ;; esac; }

# What the host needs to build (protoc-c, the onnx.proto, cmake) comes from
# scripts/setup.sh's list; here only what a cross build adds.
packages=(cmake pkg-config protobuf-c-compiler libonnx-dev opencl-c-headers python3 qemu-user)
foreign=()
for target in "${targets[@]}"; do
  arch="$(debian_arch "$target")"
  packages+=("gcc-$(triplet "$target")" "libc6-dev-$arch-cross"
             "ocl-icd-opencl-dev:$arch" "libcjson-dev:$arch" "libcmocka-dev:$arch" "libprotobuf-c-dev:$arch")
  foreign+=("$arch")
done

source scripts/packages.sh
mapfile -t missing < <(missing_packages "${packages[@]}")
missing_arch=()
known_arch=" $(dpkg --print-foreign-architectures | tr '\n' ' ') "
for arch in "${foreign[@]}"; do
  [[ "$known_arch" == *" $arch "* ]] || missing_arch+=("$arch")
done
if ((${#missing[@]} || ${#missing_arch[@]})); then
  line="apt-get install -y --no-install-recommends ${missing[*]}"
  add_arch=""
  for arch in "${missing_arch[@]}"; do add_arch+="dpkg --add-architecture $arch && "; done
  if [[ "$(id -u)" != 0 ]]; then
    echo "hgr cross: missing packages. Run as root:" >&2
    echo "  ${add_arch}apt-get update && $line" >&2
    exit 1
  fi
  echo "hgr cross: installing ${missing[*]}"
  for arch in "${missing_arch[@]}"; do dpkg --add-architecture "$arch"; done
  apt_install "hgr cross" "${missing[@]}"
fi

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

prefix="${HGR_CROSS_BUILD_PREFIX:-build-cross-}"
summary=()
status=0
for target in "${targets[@]}"; do
  dir="$prefix$target"
  t0="$(now)"
  echo "hgr cross: $target: configuring $dir (cmake/toolchains/$(triplet "$target").cmake)"
  cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$(triplet "$target").cmake" \
    -DHGR_WERROR=ON -DHGR_FUZZ=OFF -DHGR_MPI=OFF >/dev/null
  t1="$(now)"
  echo "hgr cross: $target: building"
  cmake --build "$dir" -j2 >/dev/null || cmake --build "$dir" -j1
  t2="$(now)"
  echo "hgr cross: $target: tests under $(sed -n 's/^set(HGR_CROSS_QEMU \(.*\))$/\1/p' "cmake/toolchains/$(triplet "$target").cmake")"
  log="$dir/ctest.log"
  ctest_rc=0
  ctest --test-dir "$dir" --output-on-failure -j2 >"$log" 2>&1 || ctest_rc=$?
  t3="$(now)"
  # CTest's summary line ("100% tests passed, 0 tests failed out of 163") and its
  # list of skipped tests.
  total="$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)"
  failed="$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)"
  skipped="$(grep -c '(Skipped)$' "$log" || true)"
  passed=$(( ${total:-0} - ${failed:-0} - skipped ))
  if ((ctest_rc != 0)); then
    grep -E -A1000 'The following tests FAILED' "$log" >&2 || tail -40 "$log" >&2
    status=1
  fi
  line="$target: ${total:-?} tests: $passed passed, $skipped skipped (no OpenCL device under qemu), ${failed:-?} failed;"
  line+=" configure $(seconds "$t0" "$t1") s, build $(seconds "$t1" "$t2") s, tests $(seconds "$t2" "$t3") s,"
  line+=" total $(seconds "$t0" "$t3") s (log: $log)"
  echo "hgr cross: $line"
  summary+=("$line")
done

if ((${#targets[@]} > 1)); then
  echo "hgr cross: summary"
  printf '  %s\n' "${summary[@]}"
fi
exit "$status"
