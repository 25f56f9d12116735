# RunCommAvoid.cmake - One program built with communication avoidance on
# (--comm-avoid=MODE, on or auto) and off (--mpi); at every rank count the
# two must print the same bytes, and the avoiding build must send fewer halo
# messages, its chains exchanging one grouped message per neighbour. auto
# runs with a network latency of 1 ms for the cost model
# (OPD_NET_LATENCY_US), so that it chooses to avoid after its first,
# measuring, plain run of each chain.
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=prog.opd -DWORK=dir [-DARGS="--n=5;..."]
#       [-DIGNORE=regex] -DMODE=on|auto -DMPIEXEC=mpirun -DMPIFLAGS="..." -DNPS="1;2;4"
#       -P RunCommAvoid.cmake
#
# The "on" build must report a chain made communication-avoiding
# (-Rpass=comm-avoid), or the comparison would prove nothing; with
# -DPLANLESS=ON (programs whose chains the pass leaves alone) only the
# outputs are compared. Messages are
# the totals of the --profile table (the row "total", column msgs) of the
# largest rank count. With -DSWEEP=REGEX the program has a skewed sweep
# whose later loop reads beyond the rank's points what an earlier one
# writes: the avoiding build's profile at the largest rank count must hold
# REGEX, that sweep's plan line as one sweep (the chain's extensions
# compute those points) and, with MODE=on, no sweep run as separate loops.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../e2e/FilterOutput.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

set(ENV{OPD_NET_LATENCY_US} 1000)
foreach(mode on off)
  set(flag ${mode})
  if(mode STREQUAL "on")
    set(flag ${MODE})
  endif()
  execute_process(COMMAND ${OPDC} build --mpi --comm-avoid=${flag}
                          -Rpass=comm-avoid ${SOURCE} -o ${WORK}/ca-${mode}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "opdc build --comm-avoid=${mode} ${SOURCE} failed "
                        "(${rc}):\n${out}${err}")
  endif()
  if(mode STREQUAL "on" AND NOT PLANLESS)
    if(NOT err MATCHES "remark: loop chain of")
      message(FATAL_ERROR "no chain of ${SOURCE} was made "
                          "communication-avoiding:\n${err}")
    endif()
    message(STATUS "${err}")
  endif()
endforeach()

function(run_one mode np profile result msgs)
  set(extra "")
  if(profile)
    set(extra --profile)
  endif()
  execute_process(COMMAND ${MPIEXEC} ${MPIFLAGS} -x OPD_NET_LATENCY_US
                          -np ${np} ${WORK}/ca-${mode}
                          ${ARGS} --threads=1 ${extra}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 200)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ca-${mode} on ${np} ranks failed (${rc}):\n${out}${err}")
  endif()
  set(count -1)
  if(profile)
    # The profile follows the program's output; its "total" row sums the
    # messages.
    if(NOT out MATCHES "-\ntotal +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+)")
      message(FATAL_ERROR "no total row in the profile of ca-${mode}:\n${out}")
    endif()
    set(count ${CMAKE_MATCH_1})
    message(STATUS "ca-${mode} on ${np} ranks:\n${out}")
    set(${result}Profile "${out}" PARENT_SCOPE)
    string(FIND "${out}" "\nprofile (" at)
    if(at GREATER_EQUAL 0)
      string(SUBSTRING "${out}" 0 ${at} out)
    endif()
  endif()
  drop_ignored_lines("${out}" kept)
  set(${result} "${kept}" PARENT_SCOPE)
  set(${msgs} ${count} PARENT_SCOPE)
endfunction()

list(GET NPS -1 last)
foreach(np ${NPS})
  set(profile OFF)
  if(np EQUAL last)
    set(profile ON)
  endif()
  run_one(off ${np} ${profile} plain plainMsgs)
  run_one(on ${np} ${profile} avoiding avoidingMsgs)
  if(NOT avoiding STREQUAL plain)
    message(FATAL_ERROR "on ${np} ranks --comm-avoid=on printed\n${avoiding}\n"
                        "but --comm-avoid=off printed\n${plain}")
  endif()
  if(profile AND NOT PLANLESS)
    if(NOT avoidingMsgs LESS plainMsgs)
      message(FATAL_ERROR "on ${np} ranks --comm-avoid=on sent ${avoidingMsgs} "
                          "messages, --comm-avoid=off ${plainMsgs}")
    endif()
    message(STATUS "${np} ranks: ${avoidingMsgs} messages avoiding, "
                   "${plainMsgs} plain")
  endif()
  if(profile AND SWEEP)
    # (auto may keep a chain plain, whose sweep then runs as separate
    # loops; on keeps none.)
    if(NOT avoidingProfile MATCHES "${SWEEP}" OR
       (MODE STREQUAL "on" AND
        avoidingProfile MATCHES "skewed sweep run as separate loops"))
      message(FATAL_ERROR "on ${np} ranks the avoiding build did not run its "
                          "skewed sweeps as one:\n${avoidingProfile}")
    endif()
  endif()
endforeach()
