# RunTridiagSplit.cmake - A tridiagonal solve along a dimension split over
# ranks stops with a message naming the dimension (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/adi)
mpi_test_expect_failure(2 ${WORK}/adi)
if(NOT err MATCHES "tridiagonal solve of dat 'u' on block 'grid' along dimension 1: block 'grid' is split over ranks along that dimension; a distributed tridiagonal solve \\(issue 13, item 2\\) is the next step")
  message(FATAL_ERROR "mpirun -np 2: no message about the split dimension")
endif()
