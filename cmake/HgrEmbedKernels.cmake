# Embeds kernels/*.cl into the library as C byte arrays, so the library needs no
# files at run time. hgr_embed_kernels(OUT_C SOURCES a.cl b.cl) writes a C file that
# defines hgr__kernel_sources[] and hgr__kernel_source_count.
function(hgr_embed_kernels out_c)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_custom_command(
    OUTPUT "${out_c}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} "-DSOURCES=${ARG_SOURCES}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_kernels.cmake"
    DEPENDS ${ARG_SOURCES} "${PROJECT_SOURCE_DIR}/cmake/embed_kernels.cmake"
    COMMENT "Embedding OpenCL kernel sources"
    VERBATIM)
endfunction()
