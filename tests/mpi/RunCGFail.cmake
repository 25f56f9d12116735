# RunCGFail.cmake - solve cg on an indefinite operator under MPI: every rank
# finds p.Ap <= 0 together, rank 0 alone prints the message (once, naming
# the solve's location), the job ends with a failure status (see
# CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/cgfail)
foreach(np 1 2 4)
  mpi_test_expect_failure(${np} ${WORK}/cgfail)
  string(REGEX MATCHALL "not positive definite" hits "${err}")
  list(LENGTH hits count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "mpirun -np ${np}: the message ${count} times, expected once")
  endif()
  if(NOT err MATCHES "cg_indefinite: error: [^\n]*cg_indefinite.opd:21:3: solve cg: the operator is not positive definite: p.Ap = -50 <= 0 in iteration 1")
    message(FATAL_ERROR "mpirun -np ${np}: no error message naming the solve")
  endif()
  if(NOT out MATCHES "before" OR out MATCHES "after")
    message(FATAL_ERROR "mpirun -np ${np}: unexpected output:\n${out}")
  endif()
endforeach()
