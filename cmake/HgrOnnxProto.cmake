# The ONNX loader's protobuf code: protoc-c generates C from the onnx.proto that
# Debian's libonnx-dev installs (ONNX 1.12's schema; newer models' bytes read with
# it), at build time, into the build tree. Nothing is vendored.
#   HGR_ONNX_PROTO_SOURCES   the generated onnx.pb-c.c
#   HGR_ONNX_PROTO_INCLUDE   the folder holding onnx/onnx.pb-c.h
#   HGR_PROTOBUF_C_TARGET    libprotobuf-c to link
find_package(PkgConfig REQUIRED)
pkg_check_modules(PROTOBUF_C REQUIRED IMPORTED_TARGET libprotobuf-c)
set(HGR_PROTOBUF_C_TARGET PkgConfig::PROTOBUF_C)
find_program(HGR_PROTOC_C protoc-c)
find_path(HGR_ONNX_PROTO_ROOT onnx/onnx.proto PATHS /usr/include /usr/local/include)
if(NOT HGR_PROTOC_C OR NOT HGR_ONNX_PROTO_ROOT)
  message(FATAL_ERROR "hgr: HGR_ONNX needs protoc-c (Debian: protobuf-c-compiler) and onnx/onnx.proto "
                      "(Debian: libonnx-dev); scripts/setup.sh installs them, or configure with -DHGR_ONNX=OFF")
endif()
set(HGR_ONNX_PROTO_INCLUDE "${PROJECT_BINARY_DIR}/onnx_proto")
set(HGR_ONNX_PROTO_SOURCES "${HGR_ONNX_PROTO_INCLUDE}/onnx/onnx.pb-c.c")
add_custom_command(
  OUTPUT "${HGR_ONNX_PROTO_SOURCES}" "${HGR_ONNX_PROTO_INCLUDE}/onnx/onnx.pb-c.h"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${HGR_ONNX_PROTO_INCLUDE}"
  COMMAND "${HGR_PROTOC_C}" "-I${HGR_ONNX_PROTO_ROOT}" "--c_out=${HGR_ONNX_PROTO_INCLUDE}" onnx/onnx.proto
  DEPENDS "${HGR_ONNX_PROTO_ROOT}/onnx/onnx.proto"
  COMMENT "protoc-c: onnx/onnx.proto -> onnx.pb-c.c"
  VERBATIM)
message(STATUS "hgr: ONNX loader from ${HGR_ONNX_PROTO_ROOT}/onnx/onnx.proto with ${HGR_PROTOC_C}")
