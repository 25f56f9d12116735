# Common.cmake - Steps the MPI test scripts share (include()d by them).
# SPDX-License-Identifier: Apache-2.0
#
#   mpi_test_fresh_workdir()       an empty ${WORK}
#   mpi_test_step(WHAT CMD ...)    runs CMD in ${WORK}; stops the test with
#                                  "WHAT failed (status):" and the output
#                                  unless it exits with 0
#   mpi_test_expect_failure(NP PROGRAM)
#                                  runs PROGRAM on NP ranks (one thread
#                                  each) and requires a failure status
#                                  within 60 s (no hang); sets `out` and
#                                  `err` in the caller

function(mpi_test_fresh_workdir)
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK})
endfunction()

function(mpi_test_step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
endfunction()

function(mpi_test_expect_failure np program)
  execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${program}
                          --threads=1
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 60)
  message(STATUS "mpirun -np ${np}: status ${rc}\n${out}${err}")
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "mpirun -np ${np}: expected a failure status, got '${rc}'")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
