# Fails when an #include points against braid's layering (see ../shared/STYLE.md and README's
# "Architecture"):
#   tools/ -> ops/ -> runtime/ -> planner/ -> proto/      (a folder never includes one to its left)
#   include/braid/: the public API includes only include/braid/ (and the standard library)
#   runtime/'s rooms, each of which includes only itself and the rooms before it in this list:
#     core  io  dist  device  exec  models  serve  train
# Run as: cmake -DSOURCE_DIR=<repo> -P check_layering.cmake (ctest's Layering.IncludesPointDownOnly
# and every configure run it; a violation is an error naming the file and the line).
set(forbidden_planner "runtime/|ops/|tools/|braid/")
set(forbidden_runtime "ops/|tools/")
set(forbidden_ops "tools/")
set(violations "")
foreach(layer planner runtime ops)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cc"
       "${SOURCE_DIR}/${layer}/*.cu")
  foreach(f ${files})
    file(STRINGS "${f}" lines REGEX "^#include \"(${forbidden_${layer}})")
    foreach(line ${lines})
      string(APPEND violations "${f}: ${line}\n")
    endforeach()
  endforeach()
endforeach()

file(GLOB_RECURSE public_headers "${SOURCE_DIR}/include/*")
foreach(f ${public_headers})
  file(STRINGS "${f}" lines REGEX "^#include \"")
  foreach(line ${lines})
    if(NOT line MATCHES "^#include \"braid/")
      string(APPEND violations "${f}: ${line} (a public header includes only <braid/...>)\n")
    endif()
  endforeach()
endforeach()

set(rooms core io dist device exec models serve train)
set(allowed "")
foreach(room ${rooms})
  list(APPEND allowed ${room})
  list(JOIN allowed "|" allowed_pattern)
  file(GLOB_RECURSE files "${SOURCE_DIR}/runtime/${room}/*.h" "${SOURCE_DIR}/runtime/${room}/*.cc"
       "${SOURCE_DIR}/runtime/${room}/*.cu")
  foreach(f ${files})
    file(STRINGS "${f}" lines REGEX "^#include \"runtime/")
    foreach(line ${lines})
      if(NOT line MATCHES "^#include \"runtime/(${allowed_pattern})/")
        string(APPEND violations "${f}: ${line} (runtime/${room} includes only ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
file(GLOB loose "${SOURCE_DIR}/runtime/*.h" "${SOURCE_DIR}/runtime/*.cc")
foreach(f ${loose})
  string(APPEND violations "${f}: outside every room (runtime/<room>/)\n")
endforeach()

if(violations)
  message(NOTICE "${violations}")  # unwrapped: one violation per line
  message(FATAL_ERROR "layering violations above (see README's Architecture)")
endif()
message(STATUS "layering ok")
