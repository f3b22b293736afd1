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
# libhgr_mpi (mpi/) only when MPI was found; its header goes with it. It has its own
# package, find_package(hgr_mpi) giving hgr::hgr_mpi and hgr::hgr_mpi_static, so that
# hgrConfig.cmake never needs MPI.
if(TARGET hgr_mpi)
  install(TARGETS hgr_mpi hgr_mpi_static EXPORT hgrMpiTargets
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(EXPORT hgrMpiTargets NAMESPACE hgr:: FILE hgr_mpiTargets.cmake
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/hgr_mpi")
  file(WRITE "${PROJECT_BINARY_DIR}/hgr_mpiConfig.cmake"
       "# hgr_mpi ${PROJECT_VERSION}: hgr::hgr_mpi (shared) and hgr::hgr_mpi_static.\n"
       "include(CMakeFindDependencyMacro)\n"
       "find_dependency(hgr ${PROJECT_VERSION} EXACT)\n"
       "find_dependency(MPI COMPONENTS C)\n"
       "include(\"\${CMAKE_CURRENT_LIST_DIR}/hgr_mpiTargets.cmake\")\n")
  install(FILES "${PROJECT_BINARY_DIR}/hgr_mpiConfig.cmake"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/hgr_mpi")
endif()
if(TARGET hgr_cli)
  install(TARGETS hgr_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

# The public headers, less npy.h in a minimal build and mpi.h without libhgr_mpi,
# plus the generated config.h.
file(GLOB HGR_PUBLIC_HEADERS CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/hgr/*.h")
if(HGR_MINIMAL)
  list(REMOVE_ITEM HGR_PUBLIC_HEADERS "${PROJECT_SOURCE_DIR}/include/hgr/npy.h")
endif()
if(NOT TARGET hgr_mpi)
  list(REMOVE_ITEM HGR_PUBLIC_HEADERS "${PROJECT_SOURCE_DIR}/include/hgr/mpi.h")
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
