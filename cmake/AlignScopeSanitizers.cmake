# Sanitizer builds: ALIGNSCOPE_SANITIZE instruments every target of the build
# (our libraries, executables and tests; system libraries such as Qt stay as
# they are).
#   address-undefined  AddressSanitizer + UndefinedBehaviorSanitizer; any report
#                      ends the program with a non-zero exit (no recovery), so a
#                      finding fails its ctest entry
#   thread             ThreadSanitizer (data races in the threaded pipelines)
# The CMake presets "asan" and "tsan" (build-asan/, build-tsan/) pick one with
# clang, a quick-to-build -O1 and line tables; scripts/check runs the engine and
# store suites under the first and the threaded suites under the second. The
# asan preset also builds the libFuzzer targets (ALIGNSCOPE_FUZZ=ON,
# tests/fuzz/CMakeLists.txt), whose coverage instrumentation then comes with
# the engine that the suites link, so one engine build serves both. The CUDA
# backend is left out of these builds (the presets turn it off): a CUDA runtime
# under ASan needs its own settings, and CI has no GPU to run it on.
set(ALIGNSCOPE_SANITIZE "" CACHE STRING "Sanitizers for every target: empty (none), address-undefined or thread")
set_property(CACHE ALIGNSCOPE_SANITIZE PROPERTY STRINGS "" address-undefined thread)

if(ALIGNSCOPE_SANITIZE STREQUAL "")
  return()
elseif(ALIGNSCOPE_SANITIZE STREQUAL "address-undefined")
  set(_alignscope_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(ALIGNSCOPE_SANITIZE STREQUAL "thread")
  set(_alignscope_sanitize_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "ALIGNSCOPE_SANITIZE='${ALIGNSCOPE_SANITIZE}': use address-undefined, thread or leave it empty")
endif()
list(APPEND _alignscope_sanitize_flags -fno-omit-frame-pointer)
if(ALIGNSCOPE_HAVE_CUDA)
  message(WARNING "ALIGNSCOPE_SANITIZE=${ALIGNSCOPE_SANITIZE} with the CUDA backend: only host C++ is instrumented; "
                  "configure with -DALIGNSCOPE_CUDA=OFF (as the asan/tsan presets do) for a clean run")
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_alignscope_sanitize_flags}>")
add_link_options(${_alignscope_sanitize_flags})
message(STATUS "AlignScope: sanitizers ${ALIGNSCOPE_SANITIZE}")
