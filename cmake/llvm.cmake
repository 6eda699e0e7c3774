# Finds LLVM 19 and sets HLOC_LLVM_INCLUDE and HLOC_LLVM_LINK (what codegen and the CPU runtime
# link): the shared libLLVM-19 normally, static component archives under HLOC_STATIC or
# HLOC_LLVM_STATIC (LLVM alone static: the libhloc.so scripts/build-python-carry takes to the
# GPU machine, which has no LLVM; the other libraries travel beside it).
find_program(HLOC_LLVM_CONFIG NAMES llvm-config-19 llvm-config PATHS /usr/lib/llvm-19/bin REQUIRED)
execute_process(COMMAND ${HLOC_LLVM_CONFIG} --includedir OUTPUT_VARIABLE HLOC_LLVM_INCLUDE
                OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${HLOC_LLVM_CONFIG} --libdir OUTPUT_VARIABLE HLOC_LLVM_LIBDIR
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(HLOC_LLVM_COMPONENTS core support passes orcjit jitlink x86codegen x86asmparser x86desc x86info
    nvptxcodegen nvptxdesc nvptxinfo target mc object bitreader bitwriter)
option(HLOC_LLVM_STATIC "Link LLVM's static component archives (HLOC_STATIC implies it)" OFF)
if(HLOC_STATIC OR HLOC_LLVM_STATIC)
  execute_process(COMMAND ${HLOC_LLVM_CONFIG} --link-static --libs ${HLOC_LLVM_COMPONENTS}
                  OUTPUT_VARIABLE _libs OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${HLOC_LLVM_CONFIG} --link-static --system-libs
                  OUTPUT_VARIABLE _sys OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(_libs UNIX_COMMAND "${_libs}")
  separate_arguments(_sys UNIX_COMMAND "${_sys}")
  # llvm-config names the compression libraries as -lz and -lzstd, which the linker takes from
  # the shared libraries: link their static archives instead (ZLIB found static above, as
  # ZLIB_USE_STATIC_LIBS asks), so the binary needs no libz.so.1 or libzstd.so.1. glibc's own
  # (-lrt -ldl -lm) stay shared, as glibc does. The rest it lists (libz3.so, -lxml2) only serve
  # archive members hloc does not link (Support's Z3Solver, WindowsManifest): left out, so a
  # member that needed them would fail the link rather than add a shared dependency.
  find_library(HLOC_ZSTD_STATIC NAMES libzstd.a REQUIRED)
  set(_sys_static "")
  foreach(_l IN LISTS _sys)
    if(NOT HLOC_STATIC AND _l MATCHES "^-l(z|zstd)$")
      list(APPEND _sys_static ${_l})
    elseif(_l STREQUAL "-lz")
      list(APPEND _sys_static ${ZLIB_LIBRARIES})
    elseif(_l STREQUAL "-lzstd")
      list(APPEND _sys_static ${HLOC_ZSTD_STATIC})
    elseif(_l MATCHES "^-l(rt|dl|m|pthread)$")
      list(APPEND _sys_static ${_l})
    else()
      message(STATUS "hloc: HLOC_STATIC leaves out LLVM's system library ${_l} (nothing hloc links uses it)")
    endif()
  endforeach()
  set(HLOC_LLVM_LINK -L${HLOC_LLVM_LIBDIR} ${_libs} ${_sys_static})
else()
  set(HLOC_LLVM_LINK ${HLOC_LLVM_LIBDIR}/libLLVM-19.so)
endif()
