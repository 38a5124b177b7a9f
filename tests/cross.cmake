# The architecture backend's tests (every architecture), and the cross builds' test
# environment: under an emulator, FASTSTAMP_TEST_EMULATED=1 tells timing-sensitive
# tests to relax what they assert (each says so in its output).
fts_add_test(test_arch LABELS unit)
# The same with the counter forced: under qemu-user the automatic choice on aarch64 is
# generic (arch_aarch64.c says why), and this still runs the counter path there.
if(TARGET test_arch AND NOT FASTSTAMP_FORCE_GENERIC)
  add_test(NAME test_arch_forced COMMAND test_arch)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(fts_counter tsc)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(fts_counter cntvct)
  else()
    set(fts_counter rdtime)
  endif()
  set_tests_properties(test_arch_forced PROPERTIES LABELS unit TIMEOUT 120
    ENVIRONMENT FASTSTAMP_BACKEND=${fts_counter})
endif()

if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
  get_property(fts_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${fts_tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT FASTSTAMP_TEST_EMULATED=1)
  endforeach()
endif()
