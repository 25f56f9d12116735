# RunBadMap.cmake - A map out of its target set, on 2 ranks (see
# CMakeLists.txt): the error names the map and the first bad index, the job
# ends with a failure status, nothing hangs.
# SPDX-License-Identifier: Apache-2.0
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)
mpi_test_fresh_workdir()
mpi_test_step("writing the bad mesh" ${BADMESH} ${WORK}/bad.h5)
mpi_test_step("opdc build --mpi" ${OPDC} build --mpi ${SOURCE} -o ${WORK}/badmap)
mpi_test_expect_failure(2 ${WORK}/badmap)
if(NOT err MATCHES "badmap: error: rank [01]: file 'bad.h5', dataset 'pcell': map 'pcell' \\(cells -> nodes\\): index 7 at \\[1\\]\\[0\\] is out of range for set 'nodes' of size 4")
  message(FATAL_ERROR "no error naming map 'pcell' and index 7 at [1][0]")
endif()
if(out MATCHES "not reached")
  message(FATAL_ERROR "the program went on")
endif()
