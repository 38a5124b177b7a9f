# `faststamp history` and `convert --history` on history files that are not whole
# histories: each says what the file is, in words that do not depend on strerror.
include(${CMAKE_CURRENT_LIST_DIR}/tool_run.cmake)

# A record only started (its header, no sample): fewer than 2 samples, not damage.
foreach(cmd "history" "convert;--history")
  run(1 ${TOOL} ${cmd} ${DATA}/header-only-v1.fth)
  if(NOT err MATCHES "fewer than 2 samples" OR err MATCHES "damaged")
    message(FATAL_ERROR "${cmd}: a header-only record is not said to hold fewer than 2 samples:\n${err}")
  endif()
endforeach()
run(1 ${TOOL} history ${DATA}/header-only-v2.fth)
if(NOT err MATCHES "fewer than 2 samples")
  message(FATAL_ERROR "a header-only record of format 2:\n${err}")
endif()

# A record cut inside its last block (tests/fuzz/corpus/fuzz_histfile/record-v2 cut at
# byte 700): read with its whole blocks, 7 samples of 14.
run(0 ${TOOL} history ${DATA}/record-cut-v2.fth)
if(NOT out MATCHES "samples: +7 ")
  message(FATAL_ERROR "a record cut short does not load with its whole blocks:\n${out}")
endif()
if(NOT out MATCHES "cut short: +the file ends inside a block; read up to byte [0-9]+")
  message(FATAL_ERROR "a record cut short is not said to be:\n${out}")
endif()
run(0 ${TOOL} history ${DATA}/../fuzz/corpus/fuzz_histfile/record-v2)
if(out MATCHES "cut short")
  message(FATAL_ERROR "a whole record is said to be cut short:\n${out}")
endif()
