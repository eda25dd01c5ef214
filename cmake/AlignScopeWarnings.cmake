# Warnings for our own targets (not for third-party headers).
# GCC 12 reports -Wrestrict false positives inside libstdc++'s std::string
# operator+ at -O2/-O3 (GCC bug 105329); they point at no code of ours and
# would bury real warnings, so that one check is off for GCC.
function(alignscope_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
                              -Wcast-align -Woverloaded-virtual -Wnull-dereference>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
endfunction()
