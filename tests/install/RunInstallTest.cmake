# RunInstallTest.cmake - Installs opdc into a temporary prefix, then
# configures, builds and runs tests/install/project (find_package(opdc),
# opd_add_executable) against it; checks that a second build does nothing
# and that touching an imported module rebuilds (the -MD dependency file).
# Variables: BUILD_DIR (opdc's build tree), PROJECT_DIR, WORK, GENERATOR.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.20)
macro(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endmacro()

file(REMOVE_RECURSE "${WORK}")
set(prefix "${WORK}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/opdc lib/opdc/libopd_rt.a lib/opdc/opd_rt_link.txt
          include/opdc/opd_rt.h share/opdc/stdlib/math.opd
          share/opdc/stdlib/mesh.opd share/opdc/targets/x86_64-avx512.yaml
          share/opdc/targets/cluster-h100-example.yaml
          share/man/man1/opdc.1 share/man/man5/opd.5
          share/man/man5/opd-target.5 lib/cmake/opdc/opdcConfig.cmake
          share/opdc/editors/vscode/package.json
          share/opdc/editors/vscode/syntaxes/opd.tmLanguage.json
          share/opdc/editors/vim/syntax/opd.vim
          share/opdc/editors/vim/ftdetect/opd.vim)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()

# The installed compiler finds its own targets (not the source tree's).
run("${prefix}/bin/opdc" --print-target=x86_64-avx2)
if(NOT out MATCHES "share/opdc/targets/x86_64-avx2.yaml")
  message(FATAL_ERROR "installed opdc did not use its own targets:\n${out}")
endif()

# A copy of the project, so that touching its module leaves the source alone.
file(COPY "${PROJECT_DIR}/" DESTINATION "${WORK}/project")
set(PROJECT_DIR "${WORK}/project")
set(build "${WORK}/build")
run(${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${build}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${build}")
run("${build}/bin/heat" --threads=2)
if(NOT out STREQUAL "2.0 4.0\n")
  message(FATAL_ERROR "unexpected output of heat: '${out}'")
endif()
run(${CMAKE_COMMAND} --build "${build}" --target test)

# No-op rebuild, then a rebuild after the imported module changes.
file(TIMESTAMP "${build}/bin/heat" first "%s")
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)
run(${CMAKE_COMMAND} --build "${build}")
file(TIMESTAMP "${build}/bin/heat" second "%s")
if(NOT first STREQUAL second)
  message(FATAL_ERROR "a build with nothing changed rebuilt heat")
endif()
file(TOUCH "${PROJECT_DIR}/modules/rod.opd")
run(${CMAKE_COMMAND} --build "${build}")
file(TIMESTAMP "${build}/bin/heat" third "%s")
if(third STREQUAL second)
  message(FATAL_ERROR "changing the module rod.opd did not rebuild heat")
endif()
message(STATUS "installed opdc builds an out-of-tree CMake project")
