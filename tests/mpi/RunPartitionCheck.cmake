# RunPartitionCheck.cmake - opd_rt_partition_check on a small Airfoil mesh
# at 1, 2, 3 and 4 ranks, METIS and block partitions (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("mesh generation" ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/mesh.h5)
foreach(method ptscotch metis block)
  foreach(np 1 2 3 4)
    execute_process(
      COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${CHECK} ${WORK}/mesh.h5
              --partition=${method}
      WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err TIMEOUT 120)
    message(STATUS "${method}, ${np} ranks: ${out}")
    if(NOT rc EQUAL 0 OR NOT out MATCHES "partition ok")
      message(FATAL_ERROR "${method}, ${np} ranks failed (${rc}):\n${out}${err}")
    endif()
  endforeach()
endforeach()
