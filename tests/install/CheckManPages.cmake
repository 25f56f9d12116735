# CheckManPages.cmake - Each man page renders with groff without a warning.
# Variables: GROFF, PAGES (list). SPDX-License-Identifier: Apache-2.0
foreach(page ${PAGES})
  execute_process(COMMAND ${GROFF} -man -Tutf8 -ww -z ${page}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
    message(FATAL_ERROR "${page} does not render cleanly:\n${out}${err}")
  endif()
endforeach()
