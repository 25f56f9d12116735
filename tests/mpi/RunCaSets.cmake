# RunCaSets.cmake - opd_rt_ca_sets (communication avoidance on unstructured
# sets, CaSets.cpp) at 1, 2 and 4 ranks with 2 and 3 halo layers.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
foreach(layers 2 3)
  foreach(np 1 2 4)
    execute_process(
      COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${CHECK} ${layers} --threads=1
      WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err TIMEOUT 120)
    message(STATUS "${layers} layers, ${np} ranks: ${out}")
    if(NOT rc EQUAL 0 OR NOT out MATCHES "ca-sets ok")
      message(FATAL_ERROR "${layers} layers, ${np} ranks failed (${rc}):\n${out}${err}")
    endif()
  endforeach()
endforeach()
