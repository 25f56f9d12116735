# CheckExamplesMakefile.cmake - examples/Makefile builds the examples with
# plain make, and a second make finds everything up to date (`make -q`).
# Variables: MAKE, OPDC, EXAMPLES, WORK. SPDX-License-Identifier: Apache-2.0
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${MAKE} -C "${EXAMPLES}" "OPDC=${OPDC}" "BUILD=${WORK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make failed (${rc}):\n${out}${err}")
endif()
foreach(p airfoil heat3d poisson)
  if(NOT EXISTS "${WORK}/${p}" OR NOT EXISTS "${WORK}/${p}.d")
    message(FATAL_ERROR "make did not build ${p} and ${p}.d:\n${out}${err}")
  endif()
endforeach()
file(READ "${WORK}/poisson.d" dep)
if(NOT dep MATCHES "stdlib/math.opd")
  message(FATAL_ERROR "poisson.d does not list std.math:\n${dep}")
endif()
execute_process(COMMAND ${MAKE} -q -C "${EXAMPLES}" "OPDC=${OPDC}" "BUILD=${WORK}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a second make is not a no-op (make -q: ${rc}):\n${out}${err}")
endif()
