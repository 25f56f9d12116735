# RunAirfoil.cmake - Airfoil end to end on a small mesh (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DMESHGEN=opd-airfoil-meshgen -DSOURCE=airfoil.opd
#       -DEXPECTED=airfoil_small.expected -DWORK=dir -P RunAirfoil.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/small.h5
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mesh generation failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${OPDC} build ${SOURCE} -o ${WORK}/airfoil
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opdc build failed (${rc}):\n${out}${err}")
endif()
file(READ ${EXPECTED} expected)
foreach(threads 1 2)
  execute_process(
    COMMAND ${WORK}/airfoil --meshfile=small.h5 --niter=200 --threads=${threads}
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "airfoil --threads=${threads} failed (${rc}):\n${out}${err}")
  endif()
  # The run time is the only line that may differ between runs.
  string(REGEX REPLACE "Max total runtime = \n[0-9.]+\n" "Max total runtime = \nTIME\n"
         out "${out}")
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "airfoil --threads=${threads}: output differs from "
                        "${EXPECTED}:\n${out}")
  endif()
  if(NOT EXISTS ${WORK}/q_final.h5)
    message(FATAL_ERROR "airfoil --threads=${threads} wrote no q_final.h5")
  endif()
endforeach()
