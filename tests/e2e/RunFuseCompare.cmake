# RunFuseCompare.cmake - One program built with and without loop fusion;
# every run must print the same bytes (the fuse pass's promise).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=prog.opd -DWORK=dir [-DARGS="--n=5;..."]
#       [-DIGNORE=regex] [-DMPIEXEC=mpirun -DMPIFLAGS="..." -DNP=2]
#       -P RunFuseCompare.cmake
#
# Three builds: -fno-fuse, -fno-skew (loops fused at the same point only)
# and the default (skewed sweeps too). Without MPIEXEC each runs with
# --threads=1, 2 and 5 (five threads split a skewed sweep into five parts,
# four cuts). With MPIEXEC all are built with --mpi and run under
# `mpirun -np NP` with --threads=1. Lines matching IGNORE (timings) are
# dropped before comparing. The default build must report at least one
# fusion or skewed sweep (-Rpass=fuse), or the comparison would prove
# nothing; with -DSKEW=1 a skewed sweep. -DNO_NOSKEW=1 leaves the -fno-skew
# build out (a program whose every build is slow to compile, where the
# skewed sweep against the unfused reference is the point).
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/FilterOutput.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(mpi "")
if(DEFINED MPIEXEC)
  set(mpi --mpi)
endif()

execute_process(COMMAND ${OPDC} build ${mpi} -Rpass=fuse ${SOURCE}
                        -o ${WORK}/fused
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opdc build ${mpi} ${SOURCE} failed (${rc}):\n${out}${err}")
endif()
if(NOT err MATCHES "remark: (fused|skewed)")
  message(FATAL_ERROR "opdc fused no loops of ${SOURCE}:\n${err}")
endif()
if(SKEW AND NOT err MATCHES "remark: skewed")
  message(FATAL_ERROR "opdc made no skewed sweep of ${SOURCE}:\n${err}")
endif()
set(builds unfused:-fno-fuse noskew:-fno-skew)
set(variants unfused noskew fused)
if(NO_NOSKEW)
  set(builds unfused:-fno-fuse)
  set(variants unfused fused)
endif()
foreach(variant ${builds})
  string(REPLACE ":" ";" pair ${variant})
  list(GET pair 0 name)
  list(GET pair 1 flag)
  execute_process(COMMAND ${OPDC} build ${mpi} ${flag} ${SOURCE}
                          -o ${WORK}/${name}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "opdc build ${mpi} ${flag} ${SOURCE} failed (${rc}):\n${out}${err}")
  endif()
endforeach()

function(run_one variant threads result)
  if(DEFINED MPIEXEC)
    set(cmd ${MPIEXEC} ${MPIFLAGS} -np ${NP} ${WORK}/${variant})
  else()
    set(cmd ${WORK}/${variant})
  endif()
  execute_process(COMMAND ${cmd} ${ARGS} --threads=${threads}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${variant} --threads=${threads} failed (${rc}):\n${out}${err}")
  endif()
  drop_ignored_lines("${out}" kept)
  set(${result} "${kept}" PARENT_SCOPE)
endfunction()

set(thread_counts 1 2 5)
if(DEFINED MPIEXEC)
  set(thread_counts 1)
endif()
set(reference "")
foreach(variant ${variants})
  foreach(threads ${thread_counts})
    run_one(${variant} ${threads} got)
    if(reference STREQUAL "")
      set(reference "${got}")
      message(STATUS "unfused --threads=${threads}:\n${got}")
    elseif(NOT got STREQUAL reference)
      message(FATAL_ERROR "${variant} --threads=${threads} printed\n${got}\n"
                          "but the unfused build printed\n${reference}")
    endif()
  endforeach()
endforeach()
