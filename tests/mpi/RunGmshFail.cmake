# RunGmshFail.cmake - A broken Gmsh mesh on 2 and 4 ranks: every rank
# parses the file, reports it (file:line, what was expected) and the job
# ends without a hang (see CMakeLists.txt).
# SPDX-License-Identifier: Apache-2.0
# cmake -DOPDC=opdc -DSOURCE=gmsh_read.opd -DMESH=channel.msh -DWORK=dir
#       -DMPIEXEC=mpirun -DMPIFLAGS="..." -P RunGmshFail.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/read)
file(READ ${MESH} text)
string(REPLACE "\n2 1 0 153\n" "\n2 1 0 15x3\n" text "${text}")
file(WRITE ${WORK}/bad.msh "${text}")
foreach(np 2 4)
  mpi_test_expect_failure(${np} "${WORK}/read;--mesh=bad.msh")
  if(NOT err MATCHES "read: error: rank [0-9]+: bad\\.msh:[0-9]+: \\$Nodes: expected the number of nodes in the block \\(an integer\\), found '15x3'")
    message(FATAL_ERROR "mpirun -np ${np}: no 'rank R: bad.msh:LINE: $Nodes: ...' message:\n${err}")
  endif()
endforeach()
