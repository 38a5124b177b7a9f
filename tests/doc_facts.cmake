# What the docs say that the code and the build decide, checked against them:
# - one version: CMake's project VERSION is every man page's (.TH "faststamp X") and
#   debian/changelog's newest (X-N);
# - docs/design.md's size of the shared memory, per clock and for all of them, is what
#   the publisher makes (SHMSIZE prints "PER_CLOCK_MIB CLOCKS TOTAL_MIB").
# - the header and the man pages state contracts and orders of magnitude: no figure
#   measured on some machine ("~19 ns", "1.07x clock_gettime", "on a 2-vCPU VM"), which
#   rots; those live in docs/benchmarks.md and docs/benchmark-notes.md.
# Run as: cmake -DSRC=<source tree> -DVERSION=<x.y.z> -DSHMSIZE=<shmsize> -P doc_facts.cmake
file(GLOB pages ${SRC}/man/*.[1-9])
if(NOT pages)
  message(FATAL_ERROR "no man pages in ${SRC}/man")
endif()
foreach(page ${pages})
  file(STRINGS ${page} th REGEX "^\\.TH " LIMIT_COUNT 1)
  if(NOT th MATCHES "\"faststamp ([^\"]*)\"" OR NOT CMAKE_MATCH_1 STREQUAL VERSION)
    message(FATAL_ERROR "${page}: '${th}' is not version ${VERSION} (CMakeLists.txt's project VERSION)")
  endif()
endforeach()
file(STRINGS ${SRC}/debian/changelog top LIMIT_COUNT 1)
if(NOT top MATCHES "^faststamp \\(([^-)]*)-[^)]*\\)" OR NOT CMAKE_MATCH_1 STREQUAL VERSION)
  message(FATAL_ERROR "debian/changelog: '${top}' is not version ${VERSION} (CMakeLists.txt's project VERSION)")
endif()

execute_process(COMMAND ${SHMSIZE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^([0-9]+) ([0-9]+) ([0-9]+)$")
  message(FATAL_ERROR "shmsize exited ${rc}: ${out}${err}")
endif()
set(per ${CMAKE_MATCH_1})
set(clocks ${CMAKE_MATCH_2})
set(total ${CMAKE_MATCH_3})
file(READ ${SRC}/docs/design.md design)
string(REGEX REPLACE "[ \n]+" " " design "${design}")
set(says "the memory is ${total} MiB long, ${per} MiB for each of the ${clocks} clocks")
string(FIND "${design}" "${says}" at)
if(at LESS 0)
  message(FATAL_ERROR "docs/design.md does not say '${says}' (shmsize: what the publisher makes)")
endif()

# (faststamp(1)'s ratios are check's targets, contracts: the ratio rule is for the API.)
set(measured "~[0-9.]+ ?(ns|us|ms|s)[ ,;).]|[0-9]-?v?CPU VM|vCPUs?|[0-9.]+ ?GHz|median of [0-9]|QEMU guest|[0-9] VM")
foreach(doc include/faststamp.h man/faststamp.3 man/faststamp.1 man/faststamp-history.5)
  file(READ ${SRC}/${doc} text)
  string(REGEX REPLACE "[ \n]+\\*?" " " text "${text}")
  set(rule "${measured}")
  if(doc MATCHES "faststamp\\.(h|3)$")
    set(rule "${rule}|[0-9]\\.[0-9]+x |[0-9]x clock_gettime")
  endif()
  string(REGEX MATCH "[^.;]*(${rule})[^.;]*" hit "${text}")
  if(hit)
    message(FATAL_ERROR "${doc} gives a measured figure (the figures go to docs/benchmarks.md):\n  ${hit}")
  endif()
endforeach()
