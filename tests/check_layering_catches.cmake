# Layering.ABackEdgeIsNamed: check_layering.cmake, run on tests/layering_back_edge (a tree of
# back-edges, never compiled), must fail and print every line of its expected_violations.txt.
# Run as: cmake -DSOURCE_DIR=<repo> -P check_layering_catches.cmake
set(fixture "${SOURCE_DIR}/tests/layering_back_edge")
execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${fixture}
                        -P ${SOURCE_DIR}/tests/check_layering.cmake
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0)
  message(FATAL_ERROR "check_layering.cmake passed a tree of back-edges:\n${out}${err}")
endif()
string(REPLACE "${fixture}/" "" printed "${err}")
file(STRINGS "${fixture}/expected_violations.txt" expected)
foreach(line ${expected})
  string(FIND "${printed}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "check_layering.cmake did not report\n  ${line}\nIt printed:\n${printed}")
  endif()
endforeach()
list(LENGTH expected count)
message(STATUS "check_layering.cmake named all ${count} back-edges")
