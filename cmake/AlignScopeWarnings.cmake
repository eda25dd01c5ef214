# Warnings for our own targets (not for third-party headers), in C++ and in the
# host code of CUDA sources; ALIGNSCOPE_WERROR makes them errors (CI's build).
#
# GCC 12 reports -Wrestrict false positives inside libstdc++'s std::string
# operator+ at -O2/-O3 (GCC bug 105329); they point at no code of ours and
# would bury real warnings, so that one check is off for GCC. It also reports
# -Wnull-dereference inside libstdc++'s std::function (std_function.h:405) at
# -O3 in every file that builds CLI11 option callbacks; that check stays on
# (it is seen in the log) but is never an error with GCC.
#
# CUDA host code gets the same list through -Xcompiler, less two checks that
# fire on what nvcc hands the host compiler rather than on our code: its front
# end writes `#line` markers (-Wpedantic: "style of line directive is a GCC
# extension") and turns functional casts such as std::string(x) into C-style
# casts (-Wold-style-cast). The C++ build of the same headers still checks both.
# ptxas's register-spill notes (-Xptxas=-warn-spills in kernels/) are
# performance notes about device code, not host warnings: never errors.
option(ALIGNSCOPE_WERROR "Treat compiler warnings as errors (C++ and CUDA host code)" OFF)

set(ALIGNSCOPE_CXX_WARNINGS
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wnull-dereference)
set(ALIGNSCOPE_CUDA_HOST_WARNINGS ${ALIGNSCOPE_CXX_WARNINGS})
list(REMOVE_ITEM ALIGNSCOPE_CUDA_HOST_WARNINGS -Wpedantic -Wold-style-cast)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND ALIGNSCOPE_CXX_WARNINGS -Wno-restrict)
  list(APPEND ALIGNSCOPE_CUDA_HOST_WARNINGS -Wno-restrict)
endif()
if(ALIGNSCOPE_WERROR)
  list(APPEND ALIGNSCOPE_CXX_WARNINGS -Werror)
  list(APPEND ALIGNSCOPE_CUDA_HOST_WARNINGS -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND ALIGNSCOPE_CXX_WARNINGS -Wno-error=null-dereference)
    list(APPEND ALIGNSCOPE_CUDA_HOST_WARNINGS -Wno-error=null-dereference)
  endif()
endif()
list(JOIN ALIGNSCOPE_CUDA_HOST_WARNINGS "," _alignscope_cuda_host_warnings)

function(alignscope_warnings target)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${ALIGNSCOPE_CXX_WARNINGS}>"
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_alignscope_cuda_host_warnings}>")
endfunction()
