# RunHaloPoll.cmake - opd_rt_halo_poll (HaloPoll.cpp) on 2 ranks: with the
# poll (the default) rank 1 must not wait for rank 0's long core; with
# OPD_HALO_POLL=0 the wait is printed only (it depends on the MPI's eager
# limit), and the results are checked both ways.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
# 200 x 300 cells: q's halo is a few KiB a message, over Open MPI's eager
# limit (4 KiB), so it goes in a rendezvous.
mpi_test_step("mesh generation" ${MESHGEN} --I=200 --J=300 --h5 ${WORK}/mesh.h5)
foreach(poll 1 0)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env OPD_HALO_POLL=${poll}
            ${MPIEXEC} ${MPIFLAGS} -np 2 ${CHECK} mesh.h5 --threads=1
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 120)
  message(STATUS "OPD_HALO_POLL=${poll}: ${out}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "halo-poll ok")
    message(FATAL_ERROR "OPD_HALO_POLL=${poll} failed (${rc}):\n${out}${err}")
  endif()
endforeach()
