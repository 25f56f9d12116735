# check_restart.cmake - restart.opd run whole (20 steps), and run to step 8,
# written, then resumed from the file in a second run: both final files
# must be the same bytes (the HDF5 files hold no times), at 1 and 2
# threads. -DOPDC -DSOURCE -DWORK.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/whole ${WORK}/split)
execute_process(COMMAND ${OPDC} build ${SOURCE} -o ${WORK}/restart
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opdc build failed (${rc}):\n${out}${err}")
endif()
function(run dir)
  execute_process(COMMAND ${WORK}/restart ${ARGN} WORKING_DIRECTORY ${dir}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "restart ${ARGN}: status ${rc}\n${out}${err}")
  endif()
endfunction()
foreach(threads 1 2)
  file(REMOVE ${WORK}/whole/final.h5 ${WORK}/split/final.h5
    ${WORK}/split/state.h5)
  run(${WORK}/whole --threads=${threads})
  run(${WORK}/split --threads=${threads} --stop=8)
  run(${WORK}/split --threads=${threads} --start=8)
  file(SHA256 ${WORK}/whole/final.h5 whole)
  file(SHA256 ${WORK}/split/final.h5 split)
  file(SHA256 ${WORK}/split/state.h5 state)
  if(NOT whole STREQUAL split)
    message(FATAL_ERROR "threads ${threads}: the restarted run's final.h5 "
      "differs from the uninterrupted run's")
  endif()
  if(state STREQUAL whole)
    message(FATAL_ERROR "state.h5 equals final.h5: the test compares nothing")
  endif()
  message(STATUS "threads ${threads}: restarted at step 8, final.h5 the same "
    "bytes (${whole})")
endforeach()
