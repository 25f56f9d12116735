# RunAirfoilCa.cmake - Airfoil with communication avoidance on its sets at
# the runtime's level (issue 12): the generated LLVM IR plus the calls the
# CommAvoid pass will emit (ca_patch.py: 2 halo layers, adt_calc extended
# over both, as chainSetHaloLayers plans Airfoil's chain). At 1, 2 and 4
# ranks the final q (q_final.h5) is byte for byte the plain program's, and
# on 2 ranks adt_calc sends one message per neighbour per chain while
# res_calc and bres_calc send none (plain: res_calc sends q and adt).
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("mesh generation" ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/mesh.h5)
mpi_test_step("opdc --emit=llvm" ${OPDC} --emit=llvm ${SOURCE}
              -o ${WORK}/plain.ll)
mpi_test_step("ca_patch.py" ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/ca_patch.py
              ${WORK}/plain.ll ${WORK}/ca.ll 2 adt_calc=2)
foreach(v plain ca)
  mpi_test_step("clang ${v}" ${CLANG} -c -O2 ${WORK}/${v}.ll -o ${WORK}/${v}.o)
  mpi_test_step("opdc link ${v}" ${OPDC} link --mpi ${WORK}/${v}.o
                -o ${WORK}/${v})
endforeach()
set(niter 10)
foreach(np 1 2 4)
  foreach(v plain ca)
    file(MAKE_DIRECTORY ${WORK}/${v}${np})
    execute_process(
      COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/${v}
              --meshfile=${WORK}/mesh.h5 --niter=${niter} --threads=1 --profile
      WORKING_DIRECTORY ${WORK}/${v}${np} RESULT_VARIABLE rc
      OUTPUT_VARIABLE out_${v} ERROR_VARIABLE err TIMEOUT 120)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${v}, ${np} ranks failed (${rc}):\n${out_${v}}${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
                  ${WORK}/plain${np}/q_final.h5 ${WORK}/ca${np}/q_final.h5
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${np} ranks: q_final.h5 differs with communication "
                        "avoidance")
  endif()
  message(STATUS "${np} ranks: q_final.h5 identical")
  if(np EQUAL 2)
    # Messages per loop from the profile (msgs column).
    foreach(v plain ca)
      foreach(loop adt_calc res_calc bres_calc)
        if(NOT out_${v} MATCHES "\n${loop} +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+)")
          message(FATAL_ERROR "${v}: no profile row for ${loop}:\n${out_${v}}")
        endif()
        set(${v}_${loop} ${CMAKE_MATCH_1})
      endforeach()
    endforeach()
    math(EXPR calls "2 * ${niter}")
    # One message per rank and chain, except the first (q as read).
    math(EXPR want "2 * (${calls} - 1)")
    message(STATUS "2 ranks, ${calls} chains: plain res_calc ${plain_res_calc} "
                   "messages; CA adt_calc ${ca_adt_calc}, res_calc "
                   "${ca_res_calc}, bres_calc ${ca_bres_calc}")
    if(NOT ca_adt_calc EQUAL want OR NOT ca_res_calc EQUAL 0
       OR NOT ca_bres_calc EQUAL 0)
      message(FATAL_ERROR "communication avoidance: expected ${want} "
                          "messages in adt_calc and none in res_calc and "
                          "bres_calc")
    endif()
  endif()
endforeach()
