# RunStreamCompare.cmake - One program run with plain and with streaming
# (non-temporal) stores; every run must print the same bytes.
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=prog.opd -DWORK=dir [-DARGS="--n=5;..."]
#       [-DIGNORE=regex] [-DOUTFILE=file.h5] -P RunStreamCompare.cmake
#
# Streaming is forced with OPD_STREAM_STORES=always and OPD_LLC_BYTES=1 (every
# loop "exceeds the cache", so every loop with a write-only argument runs
# its .nt body, compiler/codegen/llvm/LoopHost.cpp); the plain runs have
# OPD_STREAM_STORES=0. The reference run has dense rows (OPD_PAD_ROWS=0,
# lib/core/Mesh.cpp), the others padded ones. Plain and streamed at
# --threads=1 and 2. Lines matching IGNORE (timings) are dropped before
# comparing; OUTFILE, a file the program writes in its working folder, must
# be the same bytes too.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/FilterOutput.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${OPDC} build ${SOURCE} -o ${WORK}/prog
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opdc build ${SOURCE} failed (${rc}):\n${out}${err}")
endif()

function(run_one env threads result)
  if(OUTFILE)
    file(REMOVE ${WORK}/${OUTFILE})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${WORK}/prog ${ARGS}
                          --threads=${threads}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${env} --threads=${threads} failed (${rc}):\n${out}${err}")
  endif()
  drop_ignored_lines("${out}" kept)
  if(OUTFILE)
    file(SHA256 ${WORK}/${OUTFILE} sum)
    string(APPEND kept "${OUTFILE}: sha256 ${sum}\n")
  endif()
  set(${result} "${kept}" PARENT_SCOPE)
endfunction()

run_one("OPD_STREAM_STORES=0;OPD_PAD_ROWS=0" 1 reference)
foreach(threads 1 2)
  foreach(env "OPD_STREAM_STORES=0" "OPD_STREAM_STORES=always;OPD_LLC_BYTES=1")
    run_one("${env}" ${threads} run)
    if(NOT run STREQUAL reference)
      message(FATAL_ERROR "${env} (padded rows), --threads=${threads}: "
                          "output differs from plain stores and dense rows:\n"
                          "${run}\n--- dense, plain:\n${reference}")
    endif()
  endforeach()
endforeach()
