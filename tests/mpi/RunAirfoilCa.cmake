# RunAirfoilCa.cmake - Airfoil with communication avoidance on its sets
# (issue 12): built with --comm-avoid=on, off and auto. The predictor and
# corrector are unrolled (save_soln fused with the first adt_calc, as in
# the serial build), and the pass cuts the unrolled iteration's chain after
# the first update (its rms cannot run halo layers) into two chains,
# save_soln+adt_calc -> res_calc -> bres_calc -> update and adt_calc ->
# res_calc -> bres_calc (the first loop over 2 exec-halo layers, q exchanged
# 2 layers deep before it, in one message per neighbour; the messages are
# summed over both chains' rows). At 1, 2 and 4 ranks the final q (q_final.h5) is byte for
# byte the plain program's; on 2 ranks the chain's grouped exchange sends
# one message per neighbour per chain and its loops none (plain: res_calc
# sends q and adt); auto plans the chain too and its cost model keeps
# Airfoil plain (res_calc's two dats fly in one round either way), the same
# q, and its plain res_calc sends the bytes and messages of the off build
# although the sets have 2 halo layers (a plain exchange sends OP2's
# one-layer halo, lib/mpi/Exchange.cpp); OPD_COMM_AVOID=auto at run time
# on the `on` build decides by the cost model (once, after a measuring
# plain run), the same q again.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("mesh generation" ${MESHGEN} --I=20 --J=30 --h5 ${WORK}/mesh.h5)
foreach(mode on off auto)
  execute_process(COMMAND ${OPDC} build --mpi --comm-avoid=${mode}
                          -Rpass=comm-avoid ${SOURCE} -o ${WORK}/${mode}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "opdc build --comm-avoid=${mode} failed:\n${out}${err}")
  endif()
  if(NOT mode STREQUAL "off" AND (NOT err MATCHES
     "loop chain of 4 set loops \\('save_soln\\+adt_calc', 'res_calc', 'bres_calc', 'update'\\)"
     OR NOT err MATCHES
     "loop chain of 3 set loops \\('adt_calc', 'res_calc', 'bres_calc'\\)"))
    message(FATAL_ERROR "--comm-avoid=${mode}: Airfoil's two chains were not "
                        "made communication-avoiding:\n${err}")
  endif()
endforeach()
set(niter 10)
set(ENV{OPD_NET_LATENCY_US} 1000)
function(airfoil_run mode np)
  file(MAKE_DIRECTORY ${WORK}/${mode}${np})
  execute_process(
    COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/${mode}
            --meshfile=${WORK}/mesh.h5 --niter=${niter} --threads=1 --profile
    WORKING_DIRECTORY ${WORK}/${mode}${np} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode}, ${np} ranks failed (${rc}):\n${out}${err}")
  endif()
  set(out_${mode} "${out}" PARENT_SCOPE)
endfunction()
function(same_q mode np)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
                  ${WORK}/off${np}/q_final.h5 ${WORK}/${mode}${np}/q_final.h5
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${np} ranks: q_final.h5 differs with "
                        "--comm-avoid=${mode}")
  endif()
  message(STATUS "${np} ranks: q_final.h5 identical with --comm-avoid=${mode}")
endfunction()
foreach(np 1 2 4)
  airfoil_run(off ${np})
  airfoil_run(on ${np})
  same_q(on ${np})
  if(np EQUAL 2)
    # Messages per profile row (msgs column).
    foreach(v off on)
      foreach(row adt_calc fused res_calc bres_calc chain)
        set(re ${row})
        if(row STREQUAL "chain")
          set(re "chain at [^ ]+")
        elseif(row STREQUAL "fused")
          set(re "save_soln\\+adt_calc \\(fused\\)")
        endif()
        # Summed over the rows that match (the two chains' groups).
        set(${v}_${row} 0)
        string(REGEX MATCHALL "\n${re} +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+"
               rows "${out_${v}}")
        foreach(r IN LISTS rows)
          string(REGEX MATCH "([0-9]+)$" m "${r}")
          math(EXPR ${v}_${row} "${${v}_${row}} + ${CMAKE_MATCH_1}")
        endforeach()
      endforeach()
    endforeach()
    math(EXPR chains "2 * ${niter}")
    # One message per rank and chain, except the first (q as read).
    math(EXPR want "2 * (${chains} - 1)")
    set(group ${on_chain})
    message(STATUS "2 ranks, ${chains} chains: off: res_calc ${off_res_calc} "
                   "messages; on: grouped ${group}, adt_calc ${on_adt_calc}, "
                   "res_calc ${on_res_calc}, bres_calc ${on_bres_calc}")
    if(NOT group EQUAL want OR NOT on_adt_calc EQUAL 0 OR NOT on_fused EQUAL 0
       OR NOT on_res_calc EQUAL 0 OR NOT on_bres_calc EQUAL 0)
      message(FATAL_ERROR "communication avoidance: expected ${want} grouped "
                          "messages and none in the chain's loops:\n${out_on}")
    endif()
  endif()
endforeach()
airfoil_run(auto 4)
same_q(auto 4)
# Plain exchanges with 2 set halo layers: res_calc's messages and bytes as
# in the off build (2 ranks).
airfoil_run(off 2)
set(off2 "${out_off}")
airfoil_run(auto 2)
same_q(auto 2)
set(row "\nres_calc +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+) +([0-9.]+)")
if(NOT off2 MATCHES "${row}")
  message(FATAL_ERROR "no res_calc row in the off build's profile:\n${off2}")
endif()
set(off_sent "${CMAKE_MATCH_1} messages, ${CMAKE_MATCH_2} MB")
if(NOT out_auto MATCHES "${row}")
  message(FATAL_ERROR "no res_calc row in the auto build's profile:\n${out_auto}")
endif()
set(auto_sent "${CMAKE_MATCH_1} messages, ${CMAKE_MATCH_2} MB")
message(STATUS "2 ranks, res_calc: off ${off_sent}; auto ${auto_sent}")
if(NOT off_sent STREQUAL auto_sent)
  message(FATAL_ERROR "the auto build's plain res_calc sent ${auto_sent}, "
                      "the off build's ${off_sent}:\n${out_auto}")
endif()
if(NOT out_auto MATCHES "avoided 0 of [0-9]+ runs")
  message(FATAL_ERROR "auto chose communication avoidance for Airfoil's "
                      "one-round chain:\n${out_auto}")
endif()
# The `on` build told at run time to decide by the model.
file(MAKE_DIRECTORY ${WORK}/onauto4)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env OPD_COMM_AVOID=auto
          ${MPIEXEC} ${MPIFLAGS} -x OPD_COMM_AVOID -x OPD_NET_LATENCY_US -np 4
          ${WORK}/on --meshfile=${WORK}/mesh.h5 --niter=${niter} --threads=1
          --profile
  WORKING_DIRECTORY ${WORK}/onauto4 RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "OPD_COMM_AVOID=auto, 4 ranks failed (${rc}):\n${out}${err}")
endif()
same_q(onauto 4)
if(NOT out MATCHES "avoided [0-9]+ of [1-9][0-9]* runs; predicted")
  message(FATAL_ERROR "OPD_COMM_AVOID=auto: no decision in the profile:\n"
                      "${out}")
endif()
