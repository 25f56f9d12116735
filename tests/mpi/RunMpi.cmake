# RunMpi.cmake - One program, serial and under mpirun (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=prog.opd -DWORK=dir -DARGS="--n=5;..."
#       -DNPS="1;2;4" -DMPIEXEC=mpirun -DMPIFLAGS="..." -DPYTHON=python3
#       -DCOMPARE=compare.py [-DTOL=1e-12] [-DIGNORE=regex] [-DOUTFILE=x.h5]
#       [-DMESHGEN=gen -DMESH_ARGS="--I=20;--J=30"]
#       [-DQDIFF=qdiff.opd -DQFILE=q_final.h5] -P RunMpi.cmake
#
# Builds SOURCE with and without --mpi, runs the serial program, then the
# MPI one on each rank count of NPS (--threads=1 per rank). Every MPI run's
# output must match the serial one (compare.py, TOL relative), and OUTFILE,
# when the program writes one, must be byte for byte the serial file; QFILE
# (Airfoil's solution, summed in another order on several ranks) must be
# within TOL of the serial one, relative to the field's largest value, as
# the program QDIFF reports it.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED TOL)
  set(TOL 1e-12)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
if(DEFINED MESHGEN)
  mpi_test_step("mesh generation" ${MESHGEN} ${MESH_ARGS} --h5 ${WORK}/mesh.h5)
endif()
mpi_test_step("opdc build" ${OPDC} build ${SOURCE} -o ${WORK}/serial)
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/mpi)

execute_process(COMMAND ${WORK}/serial ${ARGS} --threads=1
  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
  OUTPUT_FILE ${WORK}/serial.out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the serial run failed (${rc}): ${err}")
endif()
if(DEFINED OUTFILE)
  file(RENAME ${WORK}/${OUTFILE} ${WORK}/serial-${OUTFILE})
endif()
if(DEFINED QFILE)
  file(RENAME ${WORK}/${QFILE} ${WORK}/serial-${QFILE})
  mpi_test_step("opdc build ${QDIFF}" ${OPDC} build ${QDIFF} -o ${WORK}/qdiff)
endif()
file(READ ${WORK}/serial.out serial)
message(STATUS "serial:\n${serial}")

foreach(np ${NPS})
  execute_process(
    COMMAND ${MPIEXEC} ${MPIFLAGS} -np ${np} ${WORK}/mpi ${ARGS} --threads=1
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc
    OUTPUT_FILE ${WORK}/np${np}.out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun -np ${np} failed (${rc}): ${err}")
  endif()
  file(READ ${WORK}/np${np}.out out)
  message(STATUS "mpirun -np ${np}:\n${out}")
  execute_process(COMMAND ${PYTHON} ${COMPARE} ${WORK}/serial.out
    ${WORK}/np${np}.out ${TOL} "${IGNORE}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE diff)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun -np ${np}: ${diff}")
  endif()
  if(DEFINED QFILE)
    execute_process(COMMAND ${WORK}/qdiff --a=serial-${QFILE} --b=${QFILE}
      WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "max relative difference ([0-9.e+-]+)")
      message(FATAL_ERROR "mpirun -np ${np}: qdiff failed (${rc}): ${out}${err}")
    endif()
    set(d ${CMAKE_MATCH_1})
    message(STATUS "mpirun -np ${np}: ${QFILE} within ${d} of the serial one")
    execute_process(COMMAND ${PYTHON} -c
      "import sys; sys.exit(0 if float('${d}') <= float('${TOL}') else 1)"
      RESULT_VARIABLE below)
    if(NOT below EQUAL 0)
      message(FATAL_ERROR "mpirun -np ${np}: ${QFILE} differs from the serial "
                          "one by ${d}, more than ${TOL}")
    endif()
  endif()
  if(DEFINED OUTFILE)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
      ${WORK}/serial-${OUTFILE} ${WORK}/${OUTFILE} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "mpirun -np ${np}: ${OUTFILE} differs from the "
                          "serial run's")
    endif()
  endif()
endforeach()
