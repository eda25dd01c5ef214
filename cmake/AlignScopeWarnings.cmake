# Warnings for our own targets (not for third-party headers).
function(alignscope_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
                              -Wcast-align -Woverloaded-virtual -Wnull-dereference>)
endfunction()
