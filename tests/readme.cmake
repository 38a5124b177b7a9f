# The README's promises about itself: at most 200 lines; it opens with the quick
# start, the two commands exactly as a fresh machine runs them, both scripts present;
# and it links every page of docs/ and every man page, so none is more than one click
# away. Run as: cmake -DSRC=<source tree> -P readme.cmake
file(READ ${SRC}/README.md text)
string(REGEX REPLACE "[^\n]" "" newlines "${text}")
string(LENGTH "${newlines}" n)
if(n GREATER 200)
  message(FATAL_ERROR "README.md has ${n} lines, more than 200: move the detail to docs/")
endif()

string(FIND "${text}" "```sh\n" at)
if(at LESS 0)
  message(FATAL_ERROR "README.md has no sh code block: the quick start is gone")
endif()
string(SUBSTRING "${text}" ${at} -1 rest)
string(FIND "${text}" "## Quick start" qs)
if(qs LESS 0 OR qs GREATER at)
  message(FATAL_ERROR "README.md's first code block is not under '## Quick start'")
endif()
set(quick "```sh
scripts/check        # build, then `faststamp info` and `faststamp check` on this machine
scripts/run-tests    # build and run the whole test suite (sanitizers, install, fuzzers, ...)
```")
string(LENGTH "${quick}" ql)
string(SUBSTRING "${rest}" 0 ${ql} first)
if(NOT first STREQUAL quick)
  message(FATAL_ERROR "README.md's first code block is not the quick start:\n${first}\nexpected:\n${quick}")
endif()
foreach(s scripts/check scripts/run-tests)
  if(NOT EXISTS ${SRC}/${s} OR IS_DIRECTORY ${SRC}/${s})
    message(FATAL_ERROR "the quick start runs ${s}, which is not there")
  endif()
endforeach()

file(GLOB pages RELATIVE ${SRC} ${SRC}/docs/*.md ${SRC}/man/*.[1-8])
foreach(p ${pages})
  string(FIND "${text}" "](${p})" hit)
  if(hit LESS 0)
    message(FATAL_ERROR "README.md does not link ${p}")
  endif()
endforeach()
message(STATUS "README.md: ${n} lines, the quick start first, every page of docs/ and man/ linked")
