# hgr.pc for pkg-config consumers, installed into <libdir>/pkgconfig. It is
# relocatable: the prefix is found from the file's own place (${pcfiledir}), so
# `cmake --install --prefix P` and DESTDIR both give a working file.
#   cc main.c $(pkg-config --cflags --libs hgr)            shared libhgr.so
#   pkg-config --static --libs hgr                          adds what libhgr.a needs
# The static library's dependencies go to Requires.private where pkg-config knows
# them (OpenCL, libcjson) and to Libs.private otherwise.
find_package(PkgConfig QUIET)

set(HGR_PC_REQUIRES_PRIVATE "")
set(HGR_PC_LIBS_PRIVATE "")
# module:flag pairs
set(HGR_PC_DEPENDENCIES OpenCL:-lOpenCL libcjson:-lcjson)
if(HGR_ONNX)
  list(APPEND HGR_PC_DEPENDENCIES libprotobuf-c:-lprotobuf-c)
endif()
foreach(dependency ${HGR_PC_DEPENDENCIES})
  string(REPLACE ":" ";" dependency "${dependency}")
  list(GET dependency 0 module)
  list(GET dependency 1 flag)
  string(MAKE_C_IDENTIFIER "HGR_PC_${module}" found_as)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(${found_as} QUIET ${module})
  endif()
  if(${found_as}_FOUND)
    list(APPEND HGR_PC_REQUIRES_PRIVATE ${module})
  else()
    list(APPEND HGR_PC_LIBS_PRIVATE ${flag})
  endif()
endforeach()
list(APPEND HGR_PC_LIBS_PRIVATE -lm -pthread)
list(JOIN HGR_PC_REQUIRES_PRIVATE " " HGR_PC_REQUIRES_PRIVATE)
list(JOIN HGR_PC_LIBS_PRIVATE " " HGR_PC_LIBS_PRIVATE)

# From the .pc file's directory back to the prefix; absolute install dirs stay as given.
set(HGR_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HGR_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(HGR_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH relative "/prefix/${HGR_PC_DIR}" "/prefix")
  string(REGEX REPLACE "/$" "" relative "${relative}")
  set(HGR_PC_PREFIX "\${pcfiledir}/${relative}")
  set(HGR_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(HGR_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(HGR_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

configure_file("${PROJECT_SOURCE_DIR}/cmake/hgr.pc.in" "${PROJECT_BINARY_DIR}/hgr.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/hgr.pc" DESTINATION "${HGR_PC_DIR}")
