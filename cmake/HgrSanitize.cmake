# HGR_SANITIZE=address,undefined builds everything with those sanitizers.
if(HGR_SANITIZE)
  set(_hgr_san_flags -fsanitize=${HGR_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_hgr_san_flags})
  add_link_options(-fsanitize=${HGR_SANITIZE})
  message(STATUS "hgr: building with -fsanitize=${HGR_SANITIZE}")
endif()
