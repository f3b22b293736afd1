# Cross-compiling hgr for aarch64-linux-gnu: 64-bit ARM (ARMv8-A), little-endian, 64-bit size_t.
#   cmake -S . -B build-cross -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# scripts/cross.sh installs the compiler, the target's libraries and qemu-aarch64, builds
# and runs the tests under qemu-aarch64. The rest is in linux-gnu.cmake.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HGR_CROSS_TRIPLET aarch64-linux-gnu)
set(HGR_CROSS_QEMU qemu-aarch64)
include("${CMAKE_CURRENT_LIST_DIR}/linux-gnu.cmake")
