# Precompiled headers for the Qt Test suites: every suite is one translation
# unit that opens with <QtTest> (all of QtCore) and the same standard headers,
# whose parsing was about half of each suite's compile time. They are parsed
# once for the non-GUI suites and once for the GUI suites (whose QtTest
# differs: QT_WIDGETS_LIB brings in its widget helpers); every other suite
# reuses the first one's. A suite's own includes are unchanged and still name
# what it uses. ALIGNSCOPE_TEST_PCH=OFF builds each suite from its headers.
#
# GCC 12 loses the system-header status of what comes from a precompiled
# header when it reports its middle-end checks, so the false positives it
# finds in libstdc++'s inlined std::string code (char_traits.h's memcpy: the
# family of GCC bug 105329, whose -Wrestrict AlignScopeWarnings.cmake already
# turns off) reach the suites that build strings from literals.
# -Wstringop-overflow and -Warray-bounds are off for GCC in the suites that
# use the precompiled headers; the same files compiled without them report
# nothing, the engine keeps both checks, and the engine and store suites run
# under ASan, which finds such overflows where they happen.
option(ALIGNSCOPE_TEST_PCH "Precompile the Qt Test and standard headers shared by the test suites" ON)

set(ALIGNSCOPE_TEST_PCH_HEADERS
    <QtTest> <QTemporaryDir> <QFile> <QDir> <QProcess>
    <algorithm> <cstdint> <filesystem> <fstream> <functional> <map> <memory> <optional> <random> <set>
    <sstream> <string> <thread> <vector>)
set(ALIGNSCOPE_TEST_PCH_GUI_HEADERS <QApplication> <QWidget> <QImage>)

# target: a suite made by tests/CMakeLists.txt; area: its folder (ui or
# another), or "none" for a suite built with other definitions than both kinds
# (GCC refuses a precompiled header made with other macros defined).
function(alignscope_test_pch target area)
  if(NOT ALIGNSCOPE_TEST_PCH OR area STREQUAL "none")
    return()
  endif()
  set(kind core)
  set(headers ${ALIGNSCOPE_TEST_PCH_HEADERS})
  if(area STREQUAL "ui")
    set(kind gui)
    list(APPEND headers ${ALIGNSCOPE_TEST_PCH_GUI_HEADERS})
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-array-bounds)
  endif()
  get_property(owner GLOBAL PROPERTY ALIGNSCOPE_TEST_PCH_OWNER_${kind})
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    set_property(GLOBAL PROPERTY ALIGNSCOPE_TEST_PCH_OWNER_${kind} ${target})
    target_precompile_headers(${target} PRIVATE ${headers})
  endif()
endfunction()
