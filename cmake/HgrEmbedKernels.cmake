# Embeds kernels/*.cl into the library as C byte arrays, so the library needs no
# files at run time. hgr_embed_kernels(OUT_C SOURCES a.cl b.cl HEADERS c.h) writes a
# C file that defines hgr__kernel_sources[] and hgr__kernel_source_count. A line
# `#include "NAME.h"` in a source is replaced by kernels/NAME.h's text (one level:
# what several programs share, e.g. conv.h's meta layout), so each program is
# still one self-contained text; HEADERS are what the sources may include.
function(hgr_embed_kernels out_c)
  cmake_parse_arguments(ARG "" "" "SOURCES;HEADERS" ${ARGN})
  add_custom_command(
    OUTPUT "${out_c}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} "-DSOURCES=${ARG_SOURCES}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_kernels.cmake"
    DEPENDS ${ARG_SOURCES} ${ARG_HEADERS} "${PROJECT_SOURCE_DIR}/cmake/embed_kernels.cmake"
    COMMENT "Embedding OpenCL kernel sources"
    VERBATIM)
endfunction()
