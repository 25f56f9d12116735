# RunAirfoil.cmake - Airfoil end to end on a generated mesh (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DMESHGEN=opd-airfoil-meshgen -DSOURCE=airfoil.opd
#       -DEXPECTED=file.expected -DWORK=dir -DMESH_ARGS="--I=20;--J=30"
#       -DNITER=200 [-DMAX_DIFF_PERCENT=5e-9] -P RunAirfoil.cmake
#
# Runs at 1 and 2 threads; both outputs must equal EXPECTED once the run
# time (and, with MAX_DIFF_PERCENT, OP2's "within X %" figure, checked
# against that bound first) are masked.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MESHGEN} ${MESH_ARGS} --h5 ${WORK}/mesh.h5
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
    COMMAND ${WORK}/airfoil --meshfile=mesh.h5 --niter=${NITER} --threads=${threads}
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "airfoil --threads=${threads} failed (${rc}):\n${out}${err}")
  endif()
  message(STATUS "airfoil --threads=${threads}:\n${out}")
  # The run time is the only line that may differ between runs.
  string(REGEX REPLACE "Max total runtime = \n[0-9.]+\n" "Max total runtime = \nTIME\n"
         out "${out}")
  if(DEFINED MAX_DIFF_PERCENT)
    # OP2's own check prints |100 (rms / 1.060114637578e-04) - 100| %; ten
    # significant digits of agreement mean a relative error below 5e-11.
    if(NOT out MATCHES "is within ([0-9.E+-]+) % of the expected solution")
      message(FATAL_ERROR "airfoil --threads=${threads}: no OP2 check line")
    endif()
    set(diff ${CMAKE_MATCH_1})
    execute_process(COMMAND python3 -c
      "import sys; sys.exit(0 if float('${diff}') < float('${MAX_DIFF_PERCENT}') else 1)"
      RESULT_VARIABLE below)
    if(NOT below EQUAL 0)
      message(FATAL_ERROR "airfoil --threads=${threads}: rms differs from "
                          "OP2's by ${diff} %, more than ${MAX_DIFF_PERCENT} %")
    endif()
    string(REPLACE "within ${diff} %" "within DIFF %" out "${out}")
  endif()
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "airfoil --threads=${threads}: output differs from "
                        "${EXPECTED}:\n${out}")
  endif()
  if(NOT EXISTS ${WORK}/q_final.h5)
    message(FATAL_ERROR "airfoil --threads=${threads} wrote no q_final.h5")
  endif()
endforeach()
