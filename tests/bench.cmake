# faststamp bench: JSON output, charts, usage errors. Timings are only checked for
# sanity (numbers, positive): performance is reported, never asserted.
foreach(t json text plot usage)
  add_test(NAME bench_${t} COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:faststamp_tool>
    -DMODE=${t} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/bench_${t}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/bench_check.cmake)
  set_tests_properties(bench_${t} PROPERTIES LABELS tool TIMEOUT 120
    SKIP_REGULAR_EXPRESSION "SKIP:")
endforeach()
# scripts/bench-doc, which writes docs/benchmarks.md, on saved outputs (tests/data/bench).
fts_tool_test(tool_bench_doc)
