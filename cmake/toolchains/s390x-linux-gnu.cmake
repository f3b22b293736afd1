# Cross-compiling hgr for s390x-linux-gnu: IBM Z, big-endian, 64-bit size_t.
#   cmake -S . -B build-cross -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x-linux-gnu.cmake
# scripts/cross.sh installs the compiler, the target's libraries and qemu-s390x, builds
# and runs the tests under qemu-s390x. The rest is in linux-gnu.cmake.
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(HGR_CROSS_TRIPLET s390x-linux-gnu)
set(HGR_CROSS_QEMU qemu-s390x)
include("${CMAKE_CURRENT_LIST_DIR}/linux-gnu.cmake")
