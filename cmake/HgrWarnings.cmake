# Warnings per STYLE.md; -Werror when HGR_WERROR is on (CI).
function(hgr_target_warnings target)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes
                                             -Wmissing-prototypes)
    if(HGR_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
