# RunCaSets.cmake - opd_rt_ca_sets (communication avoidance on unstructured
# sets, CaSets.cpp) at 1, 2 and 4 ranks with 2 and 3 halo layers, on its
# generated quadrilateral mesh and on an Airfoil mesh read from a file (in
# slices; PT-Scotch and METIS partitions).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("mesh generation" ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/mesh.h5)
function(ca_sets_run what np)
  execute_process(
    COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${CHECK} ${ARGN} --threads=1
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 120)
  message(STATUS "${what}, ${np} ranks: ${out}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "ca-sets ok")
    message(FATAL_ERROR "${what}, ${np} ranks failed (${rc}):\n${out}${err}")
  endif()
endfunction()
foreach(layers 2 3)
  foreach(np 1 2 4)
    ca_sets_run("${layers} layers" ${np} ${layers})
  endforeach()
  foreach(np 2 4)
    ca_sets_run("${layers} layers, airfoil mesh" ${np} ${layers} mesh.h5)
  endforeach()
endforeach()
ca_sets_run("3 layers, airfoil mesh, METIS" 4 3 mesh.h5 --partition=metis)
