# Shared part of the Debian cross toolchain files beside it (aarch64-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake, s390x-linux-gnu.cmake), which set HGR_CROSS_TRIPLET and
# HGR_CROSS_QEMU and include this file.
#
# What Debian 12 installs for a target <triplet> (scripts/cross.sh installs it):
#   gcc-<triplet> (package gcc-<triplet>, with libc6-dev-<arch>-cross): the compiler;
#     its own libc and dynamic loader live in /usr/<triplet>/lib, and it searches
#     /usr/include after its own headers, so the architecture-independent headers of
#     the host (CL/, cjson/, cmocka.h, protobuf-c/) serve the target too.
#   the target's libraries through multiarch (ocl-icd-opencl-dev:<arch>, ...): in
#     /usr/lib/<triplet>, with their .pc files in /usr/lib/<triplet>/pkgconfig.
# Programs built here run under qemu-user: the machine has no binfmt_misc, so CTest
# runs every test program through CMAKE_CROSSCOMPILING_EMULATOR. qemu's -L is the
# root the target's dynamic loader is found under (/usr/<triplet>/lib/ld-*.so); the
# loader then searches LD_LIBRARY_PATH: first the libc that belongs to that loader
# (the cross one, /usr/<triplet>/lib: glibc's loader and libc must be the same build;
# s390x aborts with the multiarch libc of another Debian revision), then the
# multiarch libraries.
#
# Other toolchains (an Android NDK's, a Yocto SDK's) bring their own file; hgr needs
# nothing from this one but a compiler and where the target's OpenCL, cJSON and
# protobuf-c are (docs/embedding.md).
if(NOT HGR_CROSS_TRIPLET OR NOT HGR_CROSS_QEMU)
  message(FATAL_ERROR "linux-gnu.cmake is included by a toolchain file that sets HGR_CROSS_TRIPLET and HGR_CROSS_QEMU")
endif()
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${HGR_CROSS_TRIPLET}-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE ${HGR_CROSS_TRIPLET})

# Libraries, headers and CMake packages: the target's own root first, then the host's
# multiarch folders (CMAKE_LIBRARY_ARCHITECTURE makes find_library look in
# /usr/lib/<triplet>, never in the host's /usr/lib/x86_64-linux-gnu). Programs
# (protoc-c, python3) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${HGR_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config reads only the target's .pc files (and the architecture-independent ones).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${HGR_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

set(CMAKE_CROSSCOMPILING_EMULATOR
    ${HGR_CROSS_QEMU} -L /usr/${HGR_CROSS_TRIPLET}
    -E LD_LIBRARY_PATH=/usr/${HGR_CROSS_TRIPLET}/lib:/usr/lib/${HGR_CROSS_TRIPLET})
