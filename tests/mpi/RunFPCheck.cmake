# RunFPCheck.cmake - --check-fp on 1, 2 and 4 ranks (see CMakeLists.txt):
# the first infinity is named by its global element index, the job ends,
# nothing hangs. The check is turned on through the environment
# (OPD_CHECK_FP=1), which every rank inherits from mpirun.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/fpcheck)
set(ENV{OPD_CHECK_FP} 1)
foreach(np 1 2 4)
  mpi_test_expect_failure(${np} ${WORK}/fpcheck)
  set(prefix "")
  if(np GREATER 1)
    set(prefix "rank [0-9]: ")
  endif()
  if(NOT err MATCHES "fpcheck: error: ${prefix}fpcheck.opd:34:3: loop 'flux' over set 'edges' produced \\+inf in dat 'r' at element 1500, component 0, in call 1 of this loop \\(--check-fp\\)")
    message(FATAL_ERROR "mpirun -np ${np}: no error naming element 1500")
  endif()
  if(NOT out MATCHES "before" OR out MATCHES "not reached")
    message(FATAL_ERROR "mpirun -np ${np}: unexpected output:\n${out}")
  endif()
endforeach()
