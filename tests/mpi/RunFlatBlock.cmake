# RunFlatBlock.cmake - A block dat stored flat in HDF5, read at 1, 2 and 4
# ranks (each rank reads only the planes its part spans): the same sums.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("flat.h5" ${FLATBLOCK} ${WORK}/flat.h5)
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/flatblock)
foreach(np 1 2 4)
  execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/flatblock
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "3570 2220850\n")
    message(FATAL_ERROR "${np} ranks (${rc}): '${out}'\n${err}")
  endif()
endforeach()
