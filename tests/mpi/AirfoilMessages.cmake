# AirfoilMessages.cmake - Halo messages per Airfoil iteration on 2 ranks,
# from the --profile table (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
#
# What the access descriptors require: res_calc reads q and adt through
# pecell, and loops wrote both since the previous exchange (update writes
# q, adt_calc writes adt), so each res_calc call exchanges both dats: one
# message per dat from each of the 2 ranks to the other, 4 per call, except
# the first call, where q is still as read from the file (2). bres_calc
# reads the same dats through pbecell right after res_calc: still clean,
# no message. adt_calc reads x through pcell, never written: no message.
# update and save_soln are direct: no message. save_soln runs fused with
# the first adt_calc of each iteration under --mpi as in the serial build
# (unroll-short-loops, the comm-avoid pass cutting the unrolled chain after
# update): the fused row and adt_calc's each have one call an iteration. update's rms reduction,
# combined over the ranks after each call, counts into its exch s.
# The sets are distributed before main's first statement (opd_rt_mesh_ready:
# no loop of Airfoil fills a map), not at its first loop, which runs inside
# the program's timer: the profile's partition note says so.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("mesh generation" ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/mesh.h5)
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/airfoil)
set(niter 25)
execute_process(
  COMMAND ${MPIEXEC} ${MPIFLAGS} -np 2 ${WORK}/airfoil --meshfile=mesh.h5
          --niter=${niter} --threads=1 --profile
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np 2 failed (${rc}):\n${out}${err}")
endif()
message(STATUS "${out}")
if(NOT out MATCHES "\npartition: [^\n]*; [0-9.]+ s at the start of main \\(")
  message(FATAL_ERROR "the partition note does not say the sets were "
                      "distributed at the start of main")
endif()
math(EXPR calls "2 * ${niter}")
math(EXPR want "4 * ${calls} - 2")
foreach(loop res_calc bres_calc adt_calc update "save_soln\\+adt_calc \\(fused\\)")
  if(NOT out MATCHES "\n${loop} +([0-9]+) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+) +[0-9.]+ +([0-9.]+)")
    message(FATAL_ERROR "no profile row for ${loop}")
  endif()
  set(ncalls ${CMAKE_MATCH_1})
  set(msgs ${CMAKE_MATCH_2})
  # update's rms is combined over the ranks after each call (MPI_Allreduce,
  # opd_reduce_global): the wait is the loop's, in its exchange column.
  if(loop STREQUAL "update" AND CMAKE_MATCH_3 STREQUAL "0.000000")
    message(FATAL_ERROR "update: its reductions are not in its exch s")
  endif()
  if(NOT loop MATCHES "^(res_calc|bres_calc|update)$" AND
     NOT ncalls EQUAL niter)
    message(FATAL_ERROR "${loop}: ${ncalls} calls, expected ${niter}")
  endif()
  set(expected 0)
  if(loop STREQUAL "res_calc")
    set(expected ${want})
  endif()
  if(NOT msgs EQUAL expected)
    message(FATAL_ERROR "${loop}: ${msgs} messages in ${ncalls} calls, "
                        "expected ${expected}")
  endif()
  message(STATUS "${loop}: ${msgs} messages in ${ncalls} calls")
endforeach()
