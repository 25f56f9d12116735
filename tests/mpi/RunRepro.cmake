# RunRepro.cmake - A program built with -frepro-sum prints the same bytes
# serially with 1 and 2 threads and under mpirun with 1, 2 and 4 ranks of
# 1 and 2 threads each (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=prog.opd -DWORK=dir -DARGS="--n=5;..."
#       -DMPIEXEC=mpirun -DMPIFLAGS="..." [-DHEX=ON] [-DIGNORE=regex]
#       [-DMESHGEN=gen -DMESH_ARGS="--I=20;--J=30"] -P RunRepro.cmake
#
# HEX=ON rewrites the program's printf float conversions (%.6e, %20.15f,
# ...) into %a, so that the comparison is of every bit; the copy is built
# with -I the source's folder, for its imports. Lines matching IGNORE (run
# times) and the --profile table are dropped before comparing.
#
# OMP_WAIT_POLICY=passive: 4 ranks x 2 threads on CI's 2 cores would
# otherwise spend most of their time in OpenMP's spinning barriers
# (bench/repro/README.md); the test is about bits, not speed.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
if(DEFINED MESHGEN)
  mpi_test_step("mesh generation" ${MESHGEN} ${MESH_ARGS} --h5 ${WORK}/mesh.h5)
endif()
get_filename_component(srcdir ${SOURCE} DIRECTORY)
get_filename_component(name ${SOURCE} NAME)
set(prog ${SOURCE})
if(HEX)
  file(READ ${SOURCE} text)
  string(REGEX REPLACE "%[-+ #0]*[0-9]*(\\.[0-9]+)?[eEfFgG]" "%a" text "${text}")
  set(prog ${WORK}/${name})
  file(WRITE ${prog} "${text}")
endif()
mpi_test_step("opdc build -frepro-sum" ${OPDC} build -frepro-sum -I ${srcdir}
  ${prog} -o ${WORK}/serial)
mpi_test_step("opdc build --mpi -frepro-sum" ${OPDC} build --mpi -frepro-sum
  -I ${srcdir} ${prog} -o ${WORK}/mpi)

function(filtered file var)
  file(STRINGS ${file} lines)
  set(keep "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^profile \\(")
      break()
    endif()
    if(DEFINED IGNORE AND NOT IGNORE STREQUAL "" AND line MATCHES "${IGNORE}")
      continue()
    endif()
    string(APPEND keep "${line}\n")
  endforeach()
  set(${var} "${keep}" PARENT_SCOPE)
endfunction()

set(runs "")
foreach(t 1 2)
  execute_process(COMMAND ${WORK}/serial ${ARGS} --threads=${t}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
    OUTPUT_FILE ${WORK}/serial-t${t}.out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the serial run with ${t} threads failed (${rc}): ${err}")
  endif()
  list(APPEND runs serial-t${t})
endforeach()
foreach(np 1 2 4)
  foreach(t 1 2)
    execute_process(
      COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/mpi ${ARGS} --threads=${t}
      WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
      OUTPUT_FILE ${WORK}/np${np}-t${t}.out ERROR_VARIABLE err TIMEOUT 120)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "mpirun -np ${np} --threads=${t} failed (${rc}): ${err}")
    endif()
    list(APPEND runs np${np}-t${t})
  endforeach()
endforeach()

filtered(${WORK}/serial-t1.out ref)
message(STATUS "serial, 1 thread:\n${ref}")
if(ref STREQUAL "")
  message(FATAL_ERROR "the serial run printed nothing to compare")
endif()
foreach(r IN LISTS runs)
  filtered(${WORK}/${r}.out out)
  if(NOT out STREQUAL ref)
    message(FATAL_ERROR "${r} differs from the serial run with 1 thread:\n"
                        "${out}\nexpected:\n${ref}")
  endif()
  message(STATUS "${r}: the same bytes")
endforeach()
