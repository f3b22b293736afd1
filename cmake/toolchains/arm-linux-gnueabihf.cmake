# Cross-compiling hgr for arm-linux-gnueabihf: 32-bit ARM (ARMv7-A, hard float), little-endian, 32-bit size_t.
#   cmake -S . -B build-cross -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake
# scripts/cross.sh installs the compiler, the target's libraries and qemu-arm, builds
# and runs the tests under qemu-arm. The rest is in linux-gnu.cmake.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(HGR_CROSS_TRIPLET arm-linux-gnueabihf)
set(HGR_CROSS_QEMU qemu-arm)
include("${CMAKE_CURRENT_LIST_DIR}/linux-gnu.cmake")
