# Run by tests/bench.cmake: cmake -DTOOL=... -DMODE=json|text|plot|usage -DWORK=dir -P this
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect_exit code)
  execute_process(COMMAND ${TOOL} bench ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "faststamp bench ${ARGN}: exit ${rc}, expected ${code}\n${out}\n${err}")
  endif()
  if(code EQUAL 2 AND NOT err MATCHES "usage: faststamp bench")
    message(FATAL_ERROR "faststamp bench ${ARGN}: no usage on stderr\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "usage")
  expect_exit(2 --no-such-option)
  expect_exit(2 --rounds)
  expect_exit(2 --rounds 0)
  expect_exit(2 --rounds 12x)
  expect_exit(2 --plot)
  expect_exit(2 --run-op no_such_op 10)
  expect_exit(2 --run-op store -5)
  expect_exit(2 extra)
  # The hidden child mode: a role it does not know, or no quick|full.
  expect_exit(2 --first-conversion-child no_such_role quick)
  expect_exit(2 --first-conversion-child own)
  expect_exit(2 --first-conversion-child own fast)
  expect_exit(0 --help)
  if(NOT out MATCHES "--json")
    message(FATAL_ERROR "--help does not describe --json:\n${out}")
  endif()
  expect_exit(0 --run-op store 1000)
  # The history's operations build their simulated history first (an hour with --quick).
  expect_exit(0 --quick --run-op calib_convert_day 1000)

elseif(MODE STREQUAL "json")
  # Field f of the output is a number above 0.
  function(positive_number f)
    string(JSON type ERROR_VARIABLE jerr TYPE "${out}" ${f})
    if(jerr OR NOT type STREQUAL "NUMBER")
      message(FATAL_ERROR "field ${f}: ${type} ${jerr}")
    endif()
    string(JSON v GET "${out}" ${f})
    if(NOT v GREATER 0)
      message(FATAL_ERROR "field ${f} = ${v}, expected > 0")
    endif()
    message(STATUS "${f} = ${v}")
  endfunction()
  expect_exit(0 --quick --json)
  file(WRITE ${WORK}/out.json "${out}")
  string(JSON type ERROR_VARIABLE jerr TYPE "${out}")
  if(jerr OR NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "not one JSON object (${jerr}):\n${out}")
  endif()
  # Strict parse too, when python3 is there: rejects NaN/Infinity and trailing text.
  find_program(PYTHON3 python3)
  if(PYTHON3)
    execute_process(COMMAND ${PYTHON3} -c
      "import json,sys; json.loads(open(sys.argv[1]).read(), parse_constant=lambda c: sys.exit('bad constant ' + c))"
      ${WORK}/out.json RESULT_VARIABLE rc ERROR_VARIABLE perr)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "python3 json rejects the output: ${perr}")
    endif()
  endif()
  string(JSON cpus GET "${out}" cpus)
  foreach(f store_ns store_relaxed_ns clock_gettime_ns gettimeofday_ns convert_ns
            convert_batch_ns store_2threads_ratio first_conversion_ns time_ns convert_old_ns
            accuracy_immediate_width_median_ns accuracy_late_stamps
            history_samples history_knots history_rss_bytes history_rss_bytes_per_knot
            history_add_ns history_add_p50_ns history_add_max_ns calib_convert_day_ns
            calib_convert_recent_ns calib_control_load_ns calib_convert_day_ratio_clock_gettime
            history_reader_newest_busy_calls history_reader_newest_busy_max_ns
            history_reader_random_alone_p99_ns history_reader_bracket_calls
            event_burst_ns event_relaxed_burst_ns event_burst_ratio_store
            event_relaxed_burst_ratio_store_relaxed)
    string(JSON type ERROR_VARIABLE jerr TYPE "${out}" ${f})
    if((f STREQUAL "store_2threads_ratio" OR f MATCHES "^history_reader_") AND cpus LESS 2
       AND type STREQUAL "NULL")
      message(STATUS "${f}: null with ${cpus} CPU, as documented")
      continue()
    endif()
    positive_number(${f})
  endforeach()
  # --quick feeds the history an hour: 10 samples a second.
  string(JSON v GET "${out}" history_samples)
  if(NOT v EQUAL 36000)
    message(FATAL_ERROR "history_samples = ${v}, expected 36000 (an hour) with --quick")
  endif()
  string(JSON v GET "${out}" history_knots)
  if(v GREATER 36001)
    message(FATAL_ERROR "history_knots = ${v}, more than the samples added")
  endif()
  # The shared history against a process's own: timings only positive; what the design
  # promises is asserted: the shared process uses it, takes no thread of its own and
  # copies nothing of it; the file is sparse; the service stops on SIGTERM and the
  # bench's directory is gone.
  string(JSON backend GET "${out}" backend)
  string(JSON skipped ERROR_VARIABLE jerr GET "${out}" shared_skipped)
  if(backend STREQUAL "generic")
    if(jerr OR NOT skipped MATCHES "generic")
      message(FATAL_ERROR "backend generic: shared_skipped should say so, is '${skipped}' ${jerr}")
    endif()
    string(JSON type TYPE "${out}" shared_first_conversion_shared_ns)
    if(NOT type STREQUAL "NULL")
      message(FATAL_ERROR "backend generic: shared_first_conversion_shared_ns is ${type}, not null")
    endif()
    message(STATUS "shared history: skipped, ${skipped}")
  else()
    if(NOT jerr)
      message(FATAL_ERROR "the shared-history section did not run: ${skipped}")
    endif()
    set(fields shared_first_conversion_own_ns shared_first_conversion_own_p90_ns
      shared_first_conversion_shared_ns shared_first_conversion_shared_p90_ns
      shared_file_bytes shared_file_allocated_bytes shared_client_map_rss_bytes)
    foreach(who own shared)
      foreach(op convert_recent convert_old store_convert clock_gettime)
        list(APPEND fields shared_cost_${who}_${op}_ns shared_cost_${who}_${op}_p90_ns
          shared_cost_${who}_${op}_ratio_clock_gettime)
      endforeach()
    endforeach()
    foreach(gap 500us 3ms 10ms)
      list(APPEND fields shared_fresh_${gap}_calls)
      foreach(who own shared clock_gettime)
        list(APPEND fields shared_fresh_${gap}_${who}_ns shared_fresh_${gap}_${who}_p90_ns)
      endforeach()
      foreach(who own shared)
        list(APPEND fields shared_fresh_${gap}_${who}_ratio_clock_gettime)
      endforeach()
    endforeach()
    foreach(f ${fields})
      positive_number(${f})
    endforeach()
    # --quick leaves out the 50 ms sleeps (3 s).
    string(JSON type TYPE "${out}" shared_fresh_50ms_shared_ns)
    if(NOT type STREQUAL "NULL")
      message(FATAL_ERROR "shared_fresh_50ms_shared_ns is ${type} with --quick, expected null")
    endif()
    foreach(check "shared_history_source;STREQUAL;shared" "shared_threads_shared;EQUAL;1"
                  "shared_threads_own;EQUAL;2" "shared_client_map_anon_bytes;EQUAL;0"
                  "shared_cost_own_recent_inside;EQUAL;1" "shared_cost_shared_recent_inside;EQUAL;1"
                  "shared_serve_exit;EQUAL;0")
      list(GET check 0 f)
      list(GET check 1 op)
      list(GET check 2 want)
      string(JSON v GET "${out}" ${f})
      if(NOT v ${op} want)
        message(FATAL_ERROR "${f} = ${v}, expected ${want}")
      endif()
    endforeach()
    string(JSON size GET "${out}" shared_file_bytes)
    string(JSON alloc GET "${out}" shared_file_allocated_bytes)
    if(NOT alloc LESS size)
      message(FATAL_ERROR "the shared history is not sparse: ${alloc} bytes resident of ${size}")
    endif()
    string(JSON path GET "${out}" shared_path)
    get_filename_component(dir "${path}" DIRECTORY)
    if(NOT path MATCHES "/faststamp-bench\\.[^/]+/clock$" OR EXISTS "${dir}")
      message(FATAL_ERROR "the service's directory ${dir} is still there (or a bad path '${path}')")
    endif()
  endif()

  # The "inside history" rows convert stamps a sample came after (with a counter: the
  # generic backend's stamps are clock readings, with no history to be inside).
  string(JSON v GET "${out}" convert_inside_stamps_inside)
  if(NOT backend STREQUAL "generic" AND NOT v EQUAL 1)
    message(FATAL_ERROR "convert_inside_stamps_inside = ${v}: the \"inside history\" stamps were not")
  endif()
  # The bound must cover the bracket for every stamp (a correctness property, not timing).
  foreach(round immediate late)
    string(JSON v GET "${out}" accuracy_${round}_bound_covers_pct)
    if(NOT v EQUAL 100)
      message(FATAL_ERROR "accuracy_${round}_bound_covers_pct = ${v}, expected 100")
    endif()
  endforeach()

elseif(MODE STREQUAL "text")
  # The table's lines for the shared history, in order.
  expect_exit(0 --quick)
  file(WRITE ${WORK}/out.txt "${out}")
  if(out MATCHES "backend generic")
    set(lines "the machine's shared history against a process's own"
      "  SKIP: backend generic: stamps are clock readings")
  else()
    set(n "[0-9]+")
    set(lines "the machine's shared history against a process's own"
      "  PATH [^\n]*/faststamp-bench\\.[^/]+/clock, (a tmpfs as /run is|NOT a tmpfs); "
      "  first fts_convert in a process, ns +median +p90 +threads +runs"
      "  own +${n} +${n} +2 +5\n"
      "  shared +${n} +${n} +1 +5  target <= 50 us: (met|NOT met)\n"
      "  own: fts_convert, recent, in history +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
      "  own: fts_convert, random older stamp "
      "  own: store \\+ fts_convert at once "
      "  own: clock_gettime\\(REALTIME\\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +1.00\n"
      "  shared: fts_convert, recent, in history +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
      "  shared: fts_convert, random older stamp "
      "  shared: store \\+ fts_convert at once "
      "  shared: clock_gettime\\(REALTIME\\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +1.00\n"
      "  gap +calls +median +p90 +median +p90 +median +p90 +own +shared\n"
      "  0.5 ms +${n} +${n} +${n} +${n} +${n} +${n} +${n} +[0-9.]+ +[0-9.]+"
      "  3 ms +${n} +${n} +${n} +${n} +${n} +${n} +${n} +[0-9.]+ +[0-9.]+"
      "  10 ms +${n} +${n} +${n} +${n} +${n} +${n} +${n} +[0-9.]+ +[0-9.]+"
      "  50 ms +- +\\(not with --quick\\)\n"
      "  target median <= 100, p90 <= 500 at every gap \\(50 ms not measured\\):\n    own (met|NOT met)"
      "  memory: the shared history [0-9.]+ MiB long \\(sealed memory"
      "${n} KiB resident in the publisher's mapping; in a shared process ${n} KiB\n"
      "  of it resident in its mapping, ${n} KiB anonymous in it\n"
      "  anonymous memory of a process, KiB, from before its first conversion: after it\n")
  endif()
  # Shown on failure without "SKIP:", which would make CTest count the test skipped.
  string(REPLACE "SKIP:" "Skip:" shown "${out}")
  set(rest "${out}")
  foreach(l ${lines})
    string(REGEX MATCH "${l}" m "${rest}")
    if(NOT m)
      message(FATAL_ERROR "no line matching '${l}' (after the lines before it) in:\n${shown}")
    endif()
    string(FIND "${rest}" "${m}" at)
    string(LENGTH "${m}" len)
    math(EXPR at "${at} + ${len}")
    string(SUBSTRING "${rest}" ${at} -1 rest)
  endforeach()
  string(FIND "${out}" "the machine's shared history" at)
  string(SUBSTRING "${out}" ${at} -1 section)
  if(section MATCHES "WARNING")
    string(REPLACE "SKIP:" "Skip:" section "${section}")
    message(FATAL_ERROR "the shared-history section warns:\n${section}")
  endif()
  # A backend without a counter has nothing to share: the section says so.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env FASTSTAMP_BACKEND=generic ${TOOL} bench --quick
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\n  SKIP: backend generic: stamps are clock readings")
    string(REPLACE "SKIP:" "Skip:" out "${out}")
    message(FATAL_ERROR "FASTSTAMP_BACKEND=generic: exit ${rc}, no skip line:\n${out}\n${err}")
  endif()

elseif(MODE STREQUAL "plot")
  find_program(GNUPLOT gnuplot)
  if(NOT GNUPLOT)
    # Without gnuplot the tool must say how to get it, and still exit 0.
    expect_exit(0 --quick --plot ${WORK}/charts)
    message(STATUS "SKIP: gnuplot is not installed (apt-get install gnuplot-nox)")
    return()
  endif()
  expect_exit(0 --quick --json --plot ${WORK}/charts)
  string(JSON type ERROR_VARIABLE jerr TYPE "${out}")
  if(jerr)
    message(FATAL_ERROR "--plot spoils the JSON on stdout: ${jerr}\n${out}")
  endif()
  foreach(png cost.png accuracy.png)
    if(NOT EXISTS ${WORK}/charts/${png})
      message(FATAL_ERROR "no ${png} in ${WORK}/charts")
    endif()
    file(READ ${WORK}/charts/${png} magic HEX LIMIT 8)
    if(NOT magic STREQUAL "89504e470d0a1a0a")
      message(FATAL_ERROR "${png} is not a PNG (starts ${magic})")
    endif()
  endforeach()
  # A path that cannot be a directory: an error, not a crash.
  file(WRITE ${WORK}/afile "x")
  expect_exit(1 --quick --plot ${WORK}/afile)
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
