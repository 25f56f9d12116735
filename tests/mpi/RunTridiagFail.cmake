# RunTridiagFail.cmake - A zero pivot on split lines stops the job with the
# first failing system in line order (tridiag_split_fail.opd; see
# CMakeLists.txt): along 1 and 2, on 1, 2 and 4 ranks.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/fail)
set(expect_2 "row 10 of the system at \\(5, 6, \\*\\), point \\(5, 6, 10\\)")
set(expect_1 "row 6 of the system at \\(5, \\*, 9\\), point \\(5, 6, 9\\)")
foreach(along 1 2)
  foreach(np 1 2 4)
    execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/fail
                            --threads=1 --dim=${along}
      WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err TIMEOUT 60)
    message(STATUS "along ${along}, mpirun -np ${np}: status ${rc}\n${out}${err}")
    if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
      message(FATAL_ERROR "along ${along}, mpirun -np ${np}: expected a "
                          "failure status, got '${rc}'")
    endif()
    if(NOT err MATCHES "error: (rank [0-9]+: )?tridiagonal solve of dat 'd' on block 'g' along dimension ${along}: zero pivot \\(0\\) in ${expect_${along}}")
      message(FATAL_ERROR "along ${along}, mpirun -np ${np}: not the "
                          "expected zero pivot message")
    endif()
    if(NOT out MATCHES "before" OR out MATCHES "not reached")
      message(FATAL_ERROR "along ${along}, mpirun -np ${np}: unexpected "
                          "output:\n${out}")
    endif()
  endforeach()
endforeach()
