# RunAirfoil.cmake - Airfoil end to end on a generated mesh (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DMESHGEN=opd-airfoil-meshgen -DSOURCE=airfoil.opd
#       -DEXPECTED=file.expected -DWORK=dir -DMESH_ARGS="--I=20;--J=30"
#       -DNITER=200 [-DREFERENCE=opd-airfoil-ref -DQ_TOL=1e-12]
#       [-DMAX_DIFF_PERCENT=5e-9] [-DRUN_ARGS=--renumber=rcm] -P RunAirfoil.cmake
#
# Runs opdc's build of SOURCE at 1 and 2 threads on the mesh, and, with
# REFERENCE, the sequential reference (tests/e2e/reference/airfoil_ref.cpp)
# on the same mesh. Once the run time (and, with MAX_DIFF_PERCENT, OP2's
# "within X %" figure, checked against that bound first) are masked:
#   - the reference prints exactly EXPECTED (the checked-in history is what
#     the reference prints, not a copy of opdc's output), and both opdc
#     runs' q_final.h5 are within Q_TOL of the reference's final q,
#     relative to max |q| (the reference checks it: --compare-q);
#   - both opdc runs print exactly EXPECTED.
# RUN_ARGS: extra options of both opdc runs (a list).
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

# Masks the lines that may differ between runs in the variable named by
# `var`; `who` names the run in messages.
function(mask_output var who)
  set(out "${${var}}")
  string(REGEX REPLACE "Max total runtime = \n[0-9.]+\n" "Max total runtime = \nTIME\n"
         out "${out}")
  if(DEFINED MAX_DIFF_PERCENT)
    # OP2's own check prints |100 (rms / 1.060114637578e-04) - 100| %; ten
    # significant digits of agreement mean a relative error below 5e-11.
    if(NOT out MATCHES "is within ([0-9.E+-]+) % of the expected solution")
      message(FATAL_ERROR "${who}: no OP2 check line")
    endif()
    set(diff ${CMAKE_MATCH_1})
    execute_process(COMMAND python3 -c
      "import sys; sys.exit(0 if float('${diff}') < float('${MAX_DIFF_PERCENT}') else 1)"
      RESULT_VARIABLE below)
    if(NOT below EQUAL 0)
      message(FATAL_ERROR "${who}: rms differs from OP2's by ${diff} %, more "
                          "than ${MAX_DIFF_PERCENT} %")
    endif()
    string(REPLACE "within ${diff} %" "within DIFF %" out "${out}")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

set(qfiles "")
foreach(threads 1 2)
  execute_process(
    COMMAND ${WORK}/airfoil --meshfile=mesh.h5 --niter=${NITER} --threads=${threads}
            ${RUN_ARGS}
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "airfoil --threads=${threads} failed (${rc}):\n${out}${err}")
  endif()
  message(STATUS "airfoil --threads=${threads}:\n${out}")
  mask_output(out "airfoil --threads=${threads}")
  set(opdc_out_${threads} "${out}")
  if(NOT EXISTS ${WORK}/q_final.h5)
    message(FATAL_ERROR "airfoil --threads=${threads} wrote no q_final.h5")
  endif()
  file(RENAME ${WORK}/q_final.h5 ${WORK}/q_final-${threads}.h5)
  list(APPEND qfiles --compare-q=q_final-${threads}.h5)
endforeach()

if(DEFINED REFERENCE)
  execute_process(
    COMMAND ${REFERENCE} --meshfile=mesh.h5 --niter=${NITER} ${qfiles}
            --q-tol=${Q_TOL}
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE ref ERROR_VARIABLE err)
  message(STATUS "reference:\n${ref}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the reference failed (${rc}):\n${ref}${err}")
  endif()
  mask_output(ref "the reference")
endif()
file(READ ${EXPECTED} expected)
if(DEFINED REFERENCE AND NOT ref STREQUAL expected)
  file(WRITE ${WORK}/reference.txt "${ref}")
  message(FATAL_ERROR "the reference's output differs from ${EXPECTED}; "
                      "got (also in ${WORK}/reference.txt):\n${ref}")
endif()
foreach(threads 1 2)
  if(NOT opdc_out_${threads} STREQUAL expected)
    message(FATAL_ERROR "airfoil --threads=${threads}: output differs from "
                        "${EXPECTED}:\n${opdc_out_${threads}}")
  endif()
endforeach()
