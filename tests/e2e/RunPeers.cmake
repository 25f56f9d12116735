# RunPeers.cmake - bench/peers (issue 57): the opdc sides of OPS's programs
# print OPS's checked values, and bench/peers/run.py stops clearly on a
# missing peer and reports a peer whose result is wrong.
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DROOT=src -DBUILD=build -DWORK=dir -DCASE=name -P RunPeers.cmake
#   CASE=poisson     ops_poisson.opd at OPS's default size prints OPS's
#                    expected total error, on 1 and 2 threads
#   CASE=laplace2d   laplace2d.opd on a 30 x 30 interior, 20 sweeps: the
#                    history of an independent (NumPy) Jacobi iteration
#   CASE=run-missing run.py with a peer directory that does not exist: exit 2
#   CASE=run-check   run.py with a stand-in OPS poisson (fake_poisson.sh):
#                    exit 0 and a table row with OPS's value, exit 1 and a
#                    FAIL line with a wrong one
#   CASE=run-gpu     run.py --gpu: its refusals (--prepare without --gpu, a
#                    bundle without prepared.json), then a prepared bundle
#                    of stand-ins (no GPU here: fake_copy_bw.sh, and
#                    fake_poisson.sh as opdc's and OPS's CUDA builds) run
#                    to a GPU row with the device copy
#   CASE=clover-loops clover_loops.py with opdc's CloverLeaf on
#                    clover_small.in and a stand-in OPS
#                    (fake_ops_cloverleaf.sh): the loop table with OPS's
#                    kernels beside opdc's loops; exit 2 without OPS's
#                    PASSED line
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect out what)
  foreach(pattern ${ARGN})
    string(FIND "${out}" "${pattern}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what}: no '${pattern}' in its output:\n${out}")
    endif()
  endforeach()
endfunction()

function(build_and_run source args)
  execute_process(COMMAND ${OPDC} build ${ROOT}/bench/peers/${source}.opd
                          -o ${WORK}/${source}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "opdc build bench/peers/${source}.opd failed:\n${out}${err}")
  endif()
  foreach(threads 1 2)
    execute_process(COMMAND ${WORK}/${source} ${args} --threads=${threads}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${source} --threads=${threads} failed (${rc}):\n${out}${err}")
    endif()
    expect("${out}" "${source} --threads=${threads}" ${ARGN})
  endforeach()
endfunction()

set(run ${ROOT}/bench/peers/run.py)
set(common --build ${BUILD} --work ${WORK}/run --programs poisson
           --poisson-size 20 --poisson-iters 10 --threads 1 --ranks 0 --rounds 1)
if(CASE STREQUAL "poisson")
  build_and_run(ops_poisson "" "Total error: 16.5173570176708")
elseif(CASE STREQUAL "laplace2d")
  build_and_run(laplace2d "--imax=30;--jmax=30;--iter_max=20"
    "    0, 0.249679\n   10, 0.020927\n   20, 0.011483\n"
    "This test is considered FAILED")
elseif(CASE STREQUAL "run-missing")
  execute_process(COMMAND python3 ${run} ${common} --ops-poisson ${WORK}/none
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "run.py with a missing peer: exit ${rc}, expected 2:\n${out}${err}")
  endif()
  expect("${err}" "run.py" "--ops-poisson ${WORK}/none: no such directory")
elseif(CASE STREQUAL "run-check")
  file(MAKE_DIRECTORY ${WORK}/ops)
  file(COPY_FILE ${CMAKE_CURRENT_LIST_DIR}/peers/fake_poisson.sh
                 ${WORK}/ops/poisson_openmp)
  execute_process(COMMAND python3 ${run} ${common} --ops-poisson ${WORK}/ops
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run.py with a right result: exit ${rc}:\n${out}${err}")
  endif()
  expect("${out}" "run.py" "machine: " "STREAM triad, 1 thread(s): "
    "poisson     1 thread " "OPS openmp ")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env FAKE_POISSON_ERR=16.6
                          python3 ${run} ${common} --ops-poisson ${WORK}/ops
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "run.py with a wrong result: exit ${rc}, expected 1:\n${out}${err}")
  endif()
  expect("${err}" "run.py" "FAIL poisson 1 thread OPS openmp: total error 16.5173570176708 (opdc) against 16.6 (OPS)")
  expect("${out}" "run.py" "FAIL")
elseif(CASE STREQUAL "run-gpu")
  execute_process(COMMAND python3 ${run} ${common} --prepare ${WORK}/b
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "run.py --prepare without --gpu: exit ${rc}, expected 2:\n${out}${err}")
  endif()
  expect("${err}" "run.py --prepare" "--prepare and --bundle go with --gpu")
  file(MAKE_DIRECTORY ${WORK}/b/bin ${WORK}/b/peers/poisson)
  execute_process(COMMAND python3 ${run} --gpu --bundle ${WORK}/b --work ${WORK}/run
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "run.py --bundle without prepared.json: exit ${rc}:\n${out}${err}")
  endif()
  expect("${err}" "run.py --bundle" "no prepared.json (make it with --gpu --prepare)")
  file(WRITE ${WORK}/b/prepared.json [=[{"target": "nvidia-h100", "big": false,
    "poisson_size": 20, "poisson_iters": 10, "programs": ["poisson"]}]=])
  set(peers ${CMAKE_CURRENT_LIST_DIR}/peers)
  file(COPY_FILE ${peers}/fake_copy_bw.sh ${WORK}/b/bin/copy_bw)
  file(COPY_FILE ${peers}/fake_poisson.sh ${WORK}/b/bin/opdc-poisson)
  file(COPY_FILE ${peers}/fake_poisson.sh ${WORK}/b/peers/poisson/poisson_cuda)
  execute_process(COMMAND python3 ${run} --gpu --bundle ${WORK}/b --work ${WORK}/run
                          --rounds 2
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run.py --gpu --bundle: exit ${rc}:\n${out}${err}")
  endif()
  expect("${out}" "run.py --gpu --bundle"
    "GPU: stand-in GPU; device copy (copy_bw.cu): 2500 GB/s before, 2500 GB/s after"
    "poisson     GPU 20^2 " "OPS cuda " "   1.00")
elseif(CASE STREQUAL "clover-loops")
  file(MAKE_DIRECTORY ${WORK}/ops)
  file(COPY_FILE ${CMAKE_CURRENT_LIST_DIR}/peers/fake_ops_cloverleaf.sh
                 ${WORK}/ops/cloverleaf_openmp)
  file(COPY_FILE ${CMAKE_CURRENT_LIST_DIR}/peers/fake_ops_cloverleaf.sh
                 ${WORK}/ops/cloverleaf_mpi)
  set(loops python3 ${ROOT}/bench/peers/clover_loops.py --ops-cloverleaf ${WORK}/ops
            --build ${BUILD} --work ${WORK}/loops --rounds 1 --threads 1 --ranks 0
            --deck ${ROOT}/examples/cloverleaf/clover_small.in)
  execute_process(COMMAND ${loops} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "clover_loops.py: exit ${rc}:\n${out}${err}")
  endif()
  # OPS's kernel1_x: 174 calls, 1.00 ms a call, 2.00 ms a step (87 steps);
  # kernel3_xdir and kernel4_xdir summed for opdc's cell x sweep.
  expect("${out}" "clover_loops.py" "\n1 thread\n"
    "| loop (opdc / OPS) | opdc calls | opdc ms a call | opdc ms a step | OPS calls |"
    "|   advec_mom_flux_x / kernel1_x | 174 | " " | 174 | 1.00 | 2.00 | "
    "| cell x sweep / kernel3_xdir, kernel4_xdir | 87 | " " | 87 | 3.00 | 3.00 | "
    "| (a swap) / reset_field_kernel1, 2 | 0 | - | 0.00 | 0 | - | 0.00 | - |"
    "program time, median of 1: opdc ")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env FAKE_OPS_FAIL=1 ${loops}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "clover_loops.py without OPS's PASSED: exit ${rc}, expected 2:\n${out}${err}")
  endif()
  expect("${err}" "clover_loops.py" "clover_loops.py: error: " "cloverleaf_openmp -OPS_DIAGS=2: no PASSED line")
else()
  message(FATAL_ERROR "RunPeers.cmake: unknown CASE '${CASE}'")
endif()
