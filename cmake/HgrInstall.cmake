# Install rules and the CMake package: `cmake --install build --prefix P` gives the
# headers, libhgr.so (with its soname links) and libhgr.a, the hgr program, and
# P/<libdir>/cmake/hgr/{hgrConfig,hgrConfigVersion,hgrTargets}.cmake, so that
# find_package(hgr) offers hgr::hgr (shared) and hgr::hgr_static. hgr.pc is
# HgrPkgConfig.cmake's job.
include(CMakePackageConfigHelpers)

set(HGR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hgr")

install(TARGETS hgr hgr_static EXPORT hgrTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
if(TARGET hgr_cli)
  install(TARGETS hgr_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

# The public headers, less npy.h in a minimal build, plus the generated config.h.
file(GLOB HGR_PUBLIC_HEADERS CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/hgr/*.h")
if(HGR_MINIMAL)
  list(REMOVE_ITEM HGR_PUBLIC_HEADERS "${PROJECT_SOURCE_DIR}/include/hgr/npy.h")
endif()
install(FILES ${HGR_PUBLIC_HEADERS} "${PROJECT_BINARY_DIR}/include/hgr/config.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/hgr")

# hgrConfig.cmake finds what the libraries link against: OpenCL and Threads for
# both, cJSON (through whichever target this build used) and libm for the static one.
if(HGR_CJSON_TARGET STREQUAL "cjson")
  set(HGR_CJSON_FROM "config")
else()
  set(HGR_CJSON_FROM "pkg-config")
endif()
install(EXPORT hgrTargets NAMESPACE hgr:: DESTINATION "${HGR_INSTALL_CMAKEDIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/hgrConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/hgrConfig.cmake" INSTALL_DESTINATION "${HGR_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/hgrConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/hgrConfig.cmake" "${PROJECT_BINARY_DIR}/hgrConfigVersion.cmake"
        DESTINATION "${HGR_INSTALL_CMAKEDIR}")
