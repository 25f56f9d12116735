# RunCase.cmake - Builds and runs one end-to-end case (see CMakeLists.txt).
# Built cases run three times: -O3 with --threads=1 and --threads=2, and
# -O0 with --threads=2; all three must print the same. A case expecting exit
# status 0 must have its .expected file (the test fails without one); a case
# expecting a failure may leave stdout unchecked by having none.
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DCASE=case.opd -DEXPECTED=case.expected -DWORK=dir -P RunCase.cmake
cmake_minimum_required(VERSION 3.25)
get_filename_component(name ${CASE} NAME_WE)

# Directives.
file(STRINGS ${CASE} lines REGEX "// E2E-")
set(args "")
set(exit_expected 0)
set(stderr_expected "")
set(mode build)
foreach(line ${lines})
  if(line MATCHES "// E2E-ARGS:(.*)$")
    separate_arguments(a UNIX_COMMAND "${CMAKE_MATCH_1}")
    list(APPEND args ${a})
  elseif(line MATCHES "// E2E-EXIT: *([0-9]+)")
    set(exit_expected ${CMAKE_MATCH_1})
  elseif(line MATCHES "// E2E-STDERR: *(.*[^ ]) *$")
    list(APPEND stderr_expected "${CMAKE_MATCH_1}")
  elseif(line MATCHES "// E2E-MODE: *run")
    set(mode run)
  endif()
endforeach()

# -DRUN_ARGS=... adds arguments to every run (a variant of a case).
if(DEFINED RUN_ARGS)
  list(APPEND args ${RUN_ARGS})
endif()

# A case that succeeds is only worth running if its output is checked.
if(exit_expected EQUAL 0 AND NOT EXISTS ${EXPECTED})
  message(FATAL_ERROR "${CASE} expects exit status 0 but has no ${EXPECTED}: "
                      "write the output it must print there")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
if(mode STREQUAL "build")
  # -O3 (the default) and -O0: without fast-math both must print the same.
  foreach(level "" -O0)
    execute_process(COMMAND ${OPDC} build ${level} ${CASE} -o ${WORK}/${name}${level}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "opdc build ${level} ${CASE} failed (${rc}):\n${out}${err}")
    endif()
  endforeach()
endif()

set(expected "")
if(EXISTS ${EXPECTED})
  file(READ ${EXPECTED} expected)
endif()

set(first_out "")
set(runs 1 2)
if(mode STREQUAL "build")
  list(APPEND runs O0)
endif()
foreach(threads ${runs})
  if(threads STREQUAL "O0")
    set(cmd ${WORK}/${name}-O0 ${args} --threads=2)
  elseif(mode STREQUAL "build")
    set(cmd ${WORK}/${name} ${args} --threads=${threads})
  else()
    set(cmd ${OPDC} run ${CASE} -- ${args} --threads=${threads})
  endif()
  execute_process(COMMAND ${cmd} WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${cmd}")
  if(NOT rc EQUAL exit_expected)
    message(FATAL_ERROR "${shown}: exit status ${rc}, expected "
                        "${exit_expected}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  foreach(text ${stderr_expected})
    string(FIND "${err}" "${text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${shown}: stderr lacks '${text}':\n${err}")
    endif()
  endforeach()
  # A successful run prints nothing on stderr, unless the case expects
  # something there (a warning).
  if(exit_expected EQUAL 0 AND NOT err STREQUAL "" AND NOT stderr_expected)
    message(FATAL_ERROR "${shown}: unexpected stderr:\n${err}")
  endif()
  if(EXISTS ${EXPECTED} AND NOT out STREQUAL expected)
    file(WRITE ${WORK}/actual-${threads}.txt "${out}")
    message(FATAL_ERROR "${shown}: output differs from ${EXPECTED}; got "
                        "(also in ${WORK}/actual-${threads}.txt):\n${out}")
  endif()
  if(threads STREQUAL "1")
    set(first_out "${out}")
  elseif(NOT out STREQUAL first_out)
    message(FATAL_ERROR "${shown}: output differs from the first run "
                        "(-O3, --threads=1):\n${first_out}\n---\n${out}")
  endif()
endforeach()
