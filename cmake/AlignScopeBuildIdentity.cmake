# Build information (version, git commit, CUDA architectures, MPI) compiled
# into the engine as alignscope::build_identity() (engine/include/alignscope/build_identity.hpp).
# The commit is read at every build, not only at configure time, and the
# generated file changes only when the commit does, so nothing else rebuilds.
# Include after CUDA and MPI are decided and after add_subdirectory(engine).
if(ALIGNSCOPE_HAVE_CUDA)
  set(_arch "${CMAKE_CUDA_ARCHITECTURES}")
  if(_arch STREQUAL "native" AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
    set(_arch "native: ${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  endif()
  string(REPLACE ";" " " _arch "${_arch}")
  set(_toolkit "${CMAKE_CUDA_COMPILER_VERSION}")
else()
  set(_arch "")
  set(_toolkit "")
endif()
set(_mpi_library "")
if(ALIGNSCOPE_HAVE_MPI AND MPI_CXX_LIBRARY_VERSION_STRING)
  # "Open MPI v4.1.4, package: Debian OpenMPI, ..." -> "Open MPI v4.1.4"
  string(REGEX REPLACE ",.*" "" _mpi_library "${MPI_CXX_LIBRARY_VERSION_STRING}")
  string(STRIP "${_mpi_library}" _mpi_library)
endif()
if(ALIGNSCOPE_HAVE_MPI)
  set(_mpi true)
else()
  set(_mpi false)
endif()

set(ALIGNSCOPE_BUILD_IDENTITY_CPP ${CMAKE_BINARY_DIR}/generated/build_identity.cpp)
add_custom_target(alignscope_build_identity
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${ALIGNSCOPE_BUILD_IDENTITY_CPP}
          -DTEMPLATE=${PROJECT_SOURCE_DIR}/cmake/build_identity.cpp.in
          -DVERSION=${PROJECT_VERSION} "-DCUDA_ARCHITECTURES=${_arch}" -DCUDA_TOOLKIT=${_toolkit}
          -DMPI=${_mpi} "-DMPI_LIBRARY=${_mpi_library}"
          -P ${PROJECT_SOURCE_DIR}/cmake/AlignScopeBuildIdentityWrite.cmake
  BYPRODUCTS ${ALIGNSCOPE_BUILD_IDENTITY_CPP}
  COMMENT "Reading the git commit for build_identity()"
  VERBATIM)
target_sources(alignscope_engine PRIVATE ${ALIGNSCOPE_BUILD_IDENTITY_CPP})
add_dependencies(alignscope_engine alignscope_build_identity)
