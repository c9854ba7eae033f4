# Use ccache when it is installed. The sloppiness settings let ccache cache
# objects compiled with a precompiled header (otherwise every such file misses).
find_program(HFTA_CCACHE ccache)
if(HFTA_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}"
      ${HFTA_CCACHE})
  message(STATUS "hfta: using ccache (${HFTA_CCACHE})")
endif()
