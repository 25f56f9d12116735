# Common.cmake - Steps the MPI test scripts share (include()d by them).
# SPDX-License-Identifier: Apache-2.0
#
#   mpi_test_fresh_workdir()       an empty ${WORK}
#   mpi_test_step(WHAT CMD ...)    runs CMD in ${WORK}; stops the test with
#                                  "WHAT failed (status):" and the output
#                                  unless it exits with 0

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
