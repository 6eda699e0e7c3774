# Finds LLVM 19 and sets HLOC_LLVM_INCLUDE and HLOC_LLVM_LINK (what codegen and the CPU runtime
# link): the shared libLLVM-19 normally, static component archives under HLOC_STATIC.
find_program(HLOC_LLVM_CONFIG NAMES llvm-config-19 llvm-config PATHS /usr/lib/llvm-19/bin REQUIRED)
execute_process(COMMAND ${HLOC_LLVM_CONFIG} --includedir OUTPUT_VARIABLE HLOC_LLVM_INCLUDE
                OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${HLOC_LLVM_CONFIG} --libdir OUTPUT_VARIABLE HLOC_LLVM_LIBDIR
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(HLOC_LLVM_COMPONENTS core support passes orcjit jitlink x86codegen x86asmparser x86desc x86info
    nvptxcodegen nvptxdesc nvptxinfo target mc object bitreader bitwriter)
if(HLOC_STATIC)
  execute_process(COMMAND ${HLOC_LLVM_CONFIG} --link-static --libs ${HLOC_LLVM_COMPONENTS}
                  OUTPUT_VARIABLE _libs OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${HLOC_LLVM_CONFIG} --link-static --system-libs
                  OUTPUT_VARIABLE _sys OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(_libs UNIX_COMMAND "${_libs} ${_sys}")
  set(HLOC_LLVM_LINK -L${HLOC_LLVM_LIBDIR} ${_libs})
else()
  set(HLOC_LLVM_LINK ${HLOC_LLVM_LIBDIR}/libLLVM-19.so)
endif()
