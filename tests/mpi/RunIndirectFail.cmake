# RunIndirectFail.cmake - `inout` through a non-injective map: one process
# runs it, several ranks refuse it naming the loop, dat and map (see
# CMakeLists.txt, mpi-indirect-inout-fail).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/prog)
execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -np 1 ${WORK}/prog --threads=1
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "sum ")
  message(FATAL_ERROR "mpirun -np 1 failed (${rc}):\n${out}${err}")
endif()
foreach(np 2 4)
  mpi_test_expect_failure(${np} ${WORK}/prog)
  if(NOT err MATCHES "loop 'stir' writes dat 'q' through map 'e2n' with 'inout', and two of its elements reach one target")
    message(FATAL_ERROR "mpirun -np ${np}: no message naming the loop")
  endif()
endforeach()
