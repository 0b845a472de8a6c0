# The relocatable binary package: what tools/package.sh archives (README.md, "A relocatable
# package"). The rules below install, into one folder, with
#
#   cmake --install build/release --prefix STAGE --component package
#
#   bin/      every executable of tools/ (the commands and benchmarks) and bin/braid-env
#   lib/      libbraid and every shared library it, the tools and the tests need, found by CMake's
#             runtime-dependency resolution, except the system's C and C++ runtime and NVIDIA's
#             CUDA libraries (BRAID_PACKAGE_OUTSIDE_LIBRARIES below; bin/braid-env finds NVIDIA's)
#   tests/    the GoogleTest binaries of tests/, with the data and scripts of the repository they
#             read (tests/data, tests/tools, tools/examples), where they are in the repository
#   share/braid/outside-libraries   the patterns of libraries that may resolve outside the package
#   README    tools/package/README.md
#
# They are EXCLUDE_FROM_ALL: a plain `cmake --install` (an application's, tests/embed's) installs
# none of it. tools/package.sh then strips every ELF file, gives it an $ORIGIN-relative RUNPATH
# and archives the folder.
include_guard(GLOBAL)

# The libraries a package may leave to the machine it runs on, as regular expressions over sonames
# ("<kind> <regex>" lines in share/braid/outside-libraries, read by tools/package.sh and by the
# package test): glibc's, the C++ runtime's, and NVIDIA's (found by bin/braid-env).
set(BRAID_PACKAGE_OUTSIDE_LIBRARIES
  "system ^ld-linux-x86-64\\.so\\.2$"
  "system ^lib(c|m|mvec|pthread|dl|rt|resolv|util|anl)\\.so\\.[0-9]+$"
  "system ^libstdc\\+\\+\\.so\\.6$"
  "system ^libgcc_s\\.so\\.1$"
  "nvidia ^libcuda\\.so\\.[0-9]+$"
  "nvidia ^lib(cudart|cublas|cublasLt|curand|nccl|nvrtc|nvJitLink)\\.so\\.[0-9]+$"
  "nvidia ^libcudnn(_[a-z_]+)?\\.so\\.[0-9]+$")

# Executable targets defined in `dir` and the folders below it.
function(braid_package_executables dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirectories DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(executables)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND executables ${target})
    endif()
  endforeach()
  foreach(subdirectory IN LISTS subdirectories)
    braid_package_executables(${subdirectory} below)
    list(APPEND executables ${below})
  endforeach()
  set(${out} ${executables} PARENT_SCOPE)
endfunction()

set(outside_regexes)
set(outside_lines)
foreach(line IN LISTS BRAID_PACKAGE_OUTSIDE_LIBRARIES)
  string(REGEX REPLACE "^[a-z]+ " "" regex "${line}")
  list(APPEND outside_regexes "${regex}")
  string(APPEND outside_lines "${line}\n")
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/package/outside-libraries "${outside_lines}")

set(package_executables)
if(BRAID_BUILD_TOOLS OR BRAID_BUILD_BENCHMARKS)
  braid_package_executables(${PROJECT_SOURCE_DIR}/tools package_executables)
endif()
set(package_tests)
if(BRAID_BUILD_TESTS)
  braid_package_executables(${PROJECT_SOURCE_DIR}/tests package_tests)
  list(FILTER package_tests INCLUDE REGEX "^braid_.*_tests$")
endif()

install(TARGETS braid RUNTIME_DEPENDENCY_SET braid_package_libraries
  LIBRARY DESTINATION lib NAMELINK_SKIP COMPONENT package EXCLUDE_FROM_ALL)
if(package_executables)
  install(TARGETS ${package_executables} RUNTIME_DEPENDENCY_SET braid_package_libraries
    RUNTIME DESTINATION bin COMPONENT package EXCLUDE_FROM_ALL)
endif()
if(package_tests)
  install(TARGETS ${package_tests} RUNTIME_DEPENDENCY_SET braid_package_libraries
    RUNTIME DESTINATION tests COMPONENT package EXCLUDE_FROM_ALL)
endif()
# oneTBB loads its scalable allocator with dlopen when present (and falls back to malloc): no
# DT_NEEDED names it, so it is named here to give packaged runs the allocator in-tree runs have.
if(TARGET TBB::tbbmalloc)
  install(IMPORTED_RUNTIME_ARTIFACTS TBB::tbbmalloc RUNTIME_DEPENDENCY_SET braid_package_libraries
    LIBRARY DESTINATION lib COMPONENT package EXCLUDE_FROM_ALL)
endif()
install(RUNTIME_DEPENDENCY_SET braid_package_libraries
  PRE_EXCLUDE_REGEXES ${outside_regexes}
  # The project's own libraries (libbraid) are installed above from their targets.
  POST_EXCLUDE_REGEXES "^${PROJECT_BINARY_DIR}/"
  LIBRARY DESTINATION lib COMPONENT package EXCLUDE_FROM_ALL)

install(PROGRAMS tools/package/braid-env DESTINATION bin COMPONENT package EXCLUDE_FROM_ALL)
install(FILES tools/package/README.md DESTINATION . RENAME README
  COMPONENT package EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_BINARY_DIR}/package/outside-libraries DESTINATION share/braid
  COMPONENT package EXCLUDE_FROM_ALL)
install(DIRECTORY tests/data/ DESTINATION tests/data COMPONENT package EXCLUDE_FROM_ALL)
install(DIRECTORY tests/tools/ DESTINATION tests/tools USE_SOURCE_PERMISSIONS
  COMPONENT package EXCLUDE_FROM_ALL FILES_MATCHING PATTERN "*.sh" PATTERN "*.py" PATTERN "*.pbtxt")
install(DIRECTORY tools/examples/ DESTINATION tools/examples COMPONENT package EXCLUDE_FROM_ALL)
