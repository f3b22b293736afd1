# Installs the build tree into a fresh prefix and builds and runs tests/consumer/
# against it four ways: find_package with hgr::hgr and hgr::hgr_static, and
# pkg-config with the shared library and (--static) with libhgr.a. Any failed step
# stops the test with its output. Registered in tests.cmake as install_consumer:
#   cmake -DBUILD_DIR=build -DWORK_DIR=build/tests/tmp/install_consumer
#         -DCONSUMER_DIR=tests/consumer -DCC=cc -DGENERATOR=Ninja -DCONFIG=Debug
#         -DPKG_CONFIG=pkg-config -DLIBDIR=lib -DINCLUDEDIR=include -DBINDIR=bin
#         -DVERSION=0.1.0 -DHAS_CLI=1 -DHAS_NPY=1 [-DSANITIZE=address,undefined
#         -DKEEP_MODULES=tests/keep_modules.c] -P install_consumer.cmake
# The consumer prints "no OpenCL device, skipped" and exits 77 on a machine without
# devices; this script then ends with "...no OpenCL device to run them: skipped",
# which the test's SKIP_REGULAR_EXPRESSION turns into a skip (cmake -P cannot exit
# 77). Every build and install step still runs and must pass.
cmake_minimum_required(VERSION 3.21)

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
set(passed "")
set(skipped 0)

# step(NAME <what> COMMAND <...>): runs the command, fails the test unless it exits
# 0, and leaves its combined output in step_output.
function(step)
  cmake_parse_arguments(S "" "NAME" "COMMAND" ${ARGN})
  execute_process(COMMAND ${S_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " shown "${S_COMMAND}")
    message(FATAL_ERROR "install_consumer: ${S_NAME} failed (exit ${rc}):\n  ${shown}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# run_consumer(<label> <program> [env assignments...]): runs one consumer build. It
# must print "hgr consumer ok" and exit 0, or print "no OpenCL device, skipped" and
# exit 77 (main.c); anything else fails the test.
function(run_consumer label program)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${ARGN} "${program}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(rc EQUAL 77 AND out MATCHES "no OpenCL device, skipped")
    set(skipped 1 PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: running the ${label} consumer failed (exit ${rc})")
  endif()
  if(NOT out MATCHES "hgr consumer ok")
    message(FATAL_ERROR "install_consumer: the ${label} consumer did not print 'hgr consumer ok'")
  endif()
  set(passed "${passed}  ${label}: built and ran\n" PARENT_SCOPE)
endfunction()

# 1. Install into a fresh prefix, as a user would.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
step(NAME "cmake --install" COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" --config "${CONFIG}")

# 2. The installed layout.
set(expected
  "${INCLUDEDIR}/hgr/hgr.h" "${INCLUDEDIR}/hgr/config.h" "${INCLUDEDIR}/hgr/executor.h"
  "${LIBDIR}/libhgr.a" "${LIBDIR}/libhgr.so" "${LIBDIR}/libhgr.so.${VERSION}"
  "${LIBDIR}/cmake/hgr/hgrConfig.cmake" "${LIBDIR}/cmake/hgr/hgrConfigVersion.cmake"
  "${LIBDIR}/cmake/hgr/hgrTargets.cmake" "${LIBDIR}/pkgconfig/hgr.pc")
if(HAS_CLI)
  list(APPEND expected "${BINDIR}/hgr")
endif()
if(HAS_NPY)
  list(APPEND expected "${INCLUDEDIR}/hgr/npy.h")
elseif(EXISTS "${prefix}/${INCLUDEDIR}/hgr/npy.h")
  message(FATAL_ERROR "install_consumer: a minimal build installed hgr/npy.h")
endif()
foreach(file IN LISTS expected)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "install_consumer: ${file} is not installed in ${prefix}")
  endif()
endforeach()
if(NOT IS_SYMLINK "${prefix}/${LIBDIR}/libhgr.so")
  message(FATAL_ERROR "install_consumer: ${LIBDIR}/libhgr.so is not a symbolic link to the soname")
endif()
set(passed "${passed}  installed layout: headers, libhgr.so (links) and libhgr.a, cmake/hgr, hgr.pc\n")
if(HAS_CLI)
  step(NAME "the installed hgr program" COMMAND "${prefix}/${BINDIR}/hgr" --help)
  if(NOT step_output MATCHES "devices")
    message(FATAL_ERROR "install_consumer: '${BINDIR}/hgr --help' printed no command list:\n${step_output}")
  endif()
  set(passed "${passed}  installed hgr program: runs\n")
else()
  message("install_consumer: the hgr program was not built (HGR_MINIMAL or HGR_BUILD_TOOLS=OFF); not checked")
endif()

# Sanitizer builds install instrumented libraries: the consumers need the same
# runtime, and keep_modules.c for the same reason as the tests (tests/CMakeLists.txt).
set(sanitize_flags "")
set(extra_sources "")
if(SANITIZE)
  set(sanitize_flags -fsanitize=${SANITIZE} -fno-omit-frame-pointer)
  set(extra_sources "${KEEP_MODULES}")
  message("install_consumer: instrumented hgr (-fsanitize=${SANITIZE}): consumers built with the same flags")
endif()
string(REPLACE ";" " " sanitize_string "${sanitize_flags}")

# 3. find_package(hgr), hgr::hgr and hgr::hgr_static.
step(NAME "configuring the consumer with find_package(hgr)"
  COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${consumer_build}" -G "${GENERATOR}"
          "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_BUILD_TYPE=${CONFIG}" "-DCMAKE_PREFIX_PATH=${prefix}"
          "-DCMAKE_C_FLAGS=${sanitize_string}" "-DCMAKE_EXE_LINKER_FLAGS=${sanitize_string}"
          "-DCONSUMER_EXTRA_SOURCES=${extra_sources}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step(NAME "building the find_package consumers" COMMAND "${CMAKE_COMMAND}" --build "${consumer_build}")
run_consumer("find_package, hgr::hgr" "${consumer_build}/hgr_consumer")
run_consumer("find_package, hgr::hgr_static" "${consumer_build}/hgr_consumer_static")

# 4. pkg-config, shared and static.
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "install_consumer: no pkg-config program to test hgr.pc with")
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
step(NAME "pkg-config --modversion hgr" COMMAND "${PKG_CONFIG}" --modversion hgr)
string(STRIP "${step_output}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "install_consumer: hgr.pc says version '${pc_version}', the project is ${VERSION}")
endif()
step(NAME "pkg-config --cflags --libs hgr" COMMAND "${PKG_CONFIG}" --cflags --libs hgr)
separate_arguments(shared_flags UNIX_COMMAND "${step_output}")
step(NAME "compiling the pkg-config consumer"
  COMMAND "${CC}" "${CONSUMER_DIR}/main.c" ${extra_sources} -o "${WORK_DIR}/consumer_pc" ${shared_flags}
          ${sanitize_flags})
run_consumer("pkg-config, libhgr.so" "${WORK_DIR}/consumer_pc" "LD_LIBRARY_PATH=${prefix}/${LIBDIR}")

# --static lists what libhgr.a needs; -l:libhgr.a makes the linker take the archive
# where -lhgr would prefer the shared library.
step(NAME "pkg-config --static --cflags --libs hgr" COMMAND "${PKG_CONFIG}" --static --cflags --libs hgr)
separate_arguments(static_flags UNIX_COMMAND "${step_output}")
foreach(library OpenCL cjson m)
  if(NOT "-l${library}" IN_LIST static_flags)
    message(FATAL_ERROR "install_consumer: 'pkg-config --static --libs hgr' lacks -l${library}: ${step_output}")
  endif()
endforeach()
list(TRANSFORM static_flags REPLACE "^-lhgr$" "-l:libhgr.a")
step(NAME "compiling the static pkg-config consumer"
  COMMAND "${CC}" "${CONSUMER_DIR}/main.c" ${extra_sources} -o "${WORK_DIR}/consumer_pc_static" ${static_flags}
          ${sanitize_flags})
run_consumer("pkg-config --static, libhgr.a" "${WORK_DIR}/consumer_pc_static")

if(skipped)
  message("install_consumer: built every consumer, but the machine has no OpenCL device to run them: skipped")
else()
  message("install_consumer: every step passed:\n${passed}")
endif()
