# FilterOutput.cmake - What the compare scripts (RunFuseCompare.cmake,
# RunStreamCompare.cmake) share.
# SPDX-License-Identifier: Apache-2.0
#
# drop_ignored_lines(TEXT VAR): TEXT without the lines that match the regex
# IGNORE (when the script was given one), into VAR.
function(drop_ignored_lines text result)
  string(REPLACE "\n" ";" lines "${text}")
  set(kept "")
  foreach(line IN LISTS lines)
    if(DEFINED IGNORE AND line MATCHES "${IGNORE}")
      continue()
    endif()
    string(APPEND kept "${line}\n")
  endforeach()
  set(${result} "${kept}" PARENT_SCOPE)
endfunction()
