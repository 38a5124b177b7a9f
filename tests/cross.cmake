# The architecture backend's tests (every architecture), and the cross builds' test
# environment: under an emulator, FASTSTAMP_TEST_EMULATED=1 tells timing-sensitive
# tests to relax what they assert (each says so in its output).
fts_add_test(test_arch LABELS unit realclock)
# The same with the counter forced: under qemu-user the automatic choice on aarch64 is
# generic (arch_aarch64.c says why), and this still runs the counter path there.
# On a build without a counter its counter tests skip, and the stage expects that.
if(FASTSTAMP_FORCE_GENERIC)
  set(fts_counter generic)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(fts_counter tsc)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(fts_counter cntvct)
else()
  set(fts_counter rdtime)
endif()
fts_add_cases(test_arch test_arch_forced ${CMAKE_CURRENT_SOURCE_DIR}/test_arch.c TIMEOUT 120
  LABELS unit realclock ENVIRONMENT FASTSTAMP_BACKEND=${fts_counter})

if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
  get_property(fts_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${fts_tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT FASTSTAMP_TEST_EMULATED=1)
  endforeach()
endif()
