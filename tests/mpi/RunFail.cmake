# RunFail.cmake - A failing rank ends the job cleanly (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/fail)
foreach(np 1 2 4)
  math(EXPR last "${np} - 1")
  # No hang: the timeout would report it.
  execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/fail
                          --threads=1
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 60)
  message(STATUS "mpirun -np ${np}: status ${rc}\n${out}${err}")
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "mpirun -np ${np}: expected a failure status, got '${rc}'")
  endif()
  set(prefix "")
  if(np GREATER 1)
    set(prefix "rank ${last}: ")
  endif()
  if(NOT err MATCHES "fail: error: ${prefix}[^\n]*fail.opd:17:[0-9]+: integer division by zero")
    message(FATAL_ERROR "mpirun -np ${np}: no 'fail: error: ${prefix}...' message")
  endif()
  if(NOT out MATCHES "before" OR out MATCHES "not reached")
    message(FATAL_ERROR "mpirun -np ${np}: unexpected output:\n${out}")
  endif()
endforeach()
