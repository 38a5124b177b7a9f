#!/usr/bin/env bash
# Real kernel time faults in a QEMU guest (TCG; this machine's clock is never touched):
# one boot per scenario, each stamping every ~5 us for 1.5 s before the fault and 2-3 s
# after it, then checking every conversion's error bound against its clock_gettime
# bracket (scripts/guest/run-scenario; the program is tests/guest/guest_stamp.c).
# Two guests: `tsc` keeps time with the TSC, which CPUID does not call invariant there
# (all 12 scenarios); `acpi_pm` keeps time with acpi_pm while CPUID reports an
# invariant TSC (QEMU's invtsc), the case where the library stays generic unless
# forced (8 of the 12: run-scenario --list). Every boot checks the library's
# decision as found (generic in both) and with FASTSTAMP_BACKEND=tsc (tsc), then runs
# its scenario with the counter forced.
# The stamps' brackets turn through CLOCK_REALTIME, TAI, MONOTONIC, BOOTTIME and
# MONOTONIC_RAW, and each clock is judged against its own (fts_convert_clock); across
# a set of the wall clock MONOTONIC, BOOTTIME and MONOTONIC_RAW, and across the leap
# second TAI too, must keep bounds under 10 us (plus twice the skew between CPUs the library
# measured) in the span of ambiguity. One more boot,
# `ftrace`, checks the kernel tracer's timestamps (trace_clock mono, mono_raw, boot,
# tai) against the stamps around each trace_marker write (tests/guest/guest_ftrace.c).
# Fails if any run has a conversion outside its bound, a fault that did not take
# effect, no stamp on the counter, a guest or a decision other than its kind's, or (in
# `none`) a step or suspend reported without one; or if a run skips (the ftrace boot
# when the kernel has no tracefs or none of those clocks) and is not listed in
# scripts/stages/skips/70-guest. Skips only when QEMU cannot run here (not
# installable, or no Debian mirror for the kernel).
# FTS_GUEST_SCENARIOS="a acpi_pm:b" runs a subset (run-scenario --list all: every run
# there is). Consoles: $FTS_OUT/guest/NAME.log, KIND-NAME.log. About five minutes on
# 2 cores (21 boots in 273-327 s, two runs with the per-clock checks and the ftrace
# boot; before them 20 boots of ~9 s, and 16 s a boot with a load average of 13 from
# other work), plus a one-time kernel download.
set -uo pipefail
read -r -a scenarios <<< "${FTS_GUEST_SCENARIOS:-$("$FTS_TOP/scripts/guest/run-scenario" --list)}"

"$FTS_TOP/scripts/guest/build"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "guest: build failed"; exit 1; }
export FTS_GUEST_PREBUILT=1

stage_start=$(date +%s)
rows=() failed=() skipped=() boots=0
allowed=$(grep -v '^#' "$FTS_TOP/scripts/stages/skips/70-guest" 2>/dev/null)
for s in "${scenarios[@]}"; do
  echo "=== run $s"
  t0=$(date +%s)
  out=$("$FTS_TOP/scripts/guest/run-scenario" "$s" 2>&1)
  rc=$?
  echo "$out"
  verdict=ok
  if [ $rc -eq 77 ]; then
    verdict=SKIP
    if grep -qxF "$s" <<< "$allowed"; then
      skipped+=("$s")
      echo "skipped (expected here): $s"
    else
      failed+=("$s")
      echo "skipped, and not listed in scripts/stages/skips/70-guest: $s"
    fi
  elif [ $rc -ne 0 ]; then
    verdict=FAIL
    failed+=("$s")
  fi
  boots=$(( boots + 1 + $(echo "$out" | grep -c '^host: boot [0-9] hung') ))
  rows+=("$verdict $(( $(date +%s) - t0 )) $(echo "$out" | grep -E '^FTS-(GUEST|RESULT)' | tail -n 2 |
    tr '\n' ' ') run=$s")
done

# One row per run: the FTS-GUEST and FTS-RESULT fields that tell a verdict ("-": not reported).
cols="run fault_ok stamps outside worst_miss_ns straddling immediate immediate_outside
      wide wide_from_us wide_to_us max_err_ns steps_seen suspends_seen tagged tagged_from_us
      counter_stamps proof_tries decision_found decision_forced forced_stamp backend"
echo
printf '%s\n' "${rows[@]}" | awk -v cols="verdict secs $cols" '
  BEGIN { n = split(cols, c, /[ \n]+/); for (i = 1; i <= n; i++) { t[0, i] = c[i]; w[i] = length(c[i]) } }
  { delete f
    f["verdict"] = $1; f["secs"] = $2
    for (i = 3; i <= NF; i++) if ($i ~ /=/) { k = v = $i; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v); f[k] = v }
    for (i = 1; i <= n; i++) { t[NR, i] = (c[i] in f) ? f[c[i]] : "-"; if (length(t[NR, i]) > w[i]) w[i] = length(t[NR, i]) } }
  END { for (r = 0; r <= NR; r++) { for (i = 1; i <= n; i++) printf "%-" w[i] "s ", t[r, i]; print "" } }'
# Each clock: conversions outside their bound : widest bound in the span of ambiguity
# (-1: no stamp there) : widest outside it, ns. The ftrace run: each trace clock's
# markers outside their bounds : the widest bound.
echo
printf '%s\n' "${rows[@]}" | awk '
  BEGIN { print "run                    rt                     tai                    mono                   boot                   raw" }
  { delete f
    for (i = 3; i <= NF; i++) if ($i ~ /=/) { k = v = $i; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v); f[k] = v }
    if (f["scenario"] == "ftrace") {
      line = sprintf("%-22s", f["run"]); n = split(f["tested"], t, ",")
      for (i = 1; i <= n; i++) line = line sprintf(" %s %s:%s", t[i], f[t[i] "_outside"], f[t[i] "_max_err_ns"])
      print line " (trace clock outside:widest bound, resolution " f["resolution_ns"] " ns)"; next }
    if (!("rt_stamps" in f)) { printf "%-22s (no per-clock result)\n", f["run"]; next }
    line = sprintf("%-22s", f["run"])
    split("rt tai mono boot raw", c, " ")
    for (i = 1; i <= 5; i++)
      line = line sprintf(" %-22s", f[c[i] "_outside"] ":" f[c[i] "_span_err_ns"] ":" f[c[i] "_out_err_ns"])
    print line }'
# Every conversion judged against its bracket: each stamp after the run, and the
# immediate ones the converter thread made during it.
printf '%s\n' "${rows[@]}" | awk -v runs=${#scenarios[@]} -v boots=$boots \
  -v secs=$(( $(date +%s) - stage_start )) '
  { for (i = 3; i <= NF; i++) if ($i ~ /^(stamps|outside|immediate|immediate_outside)=/ ||
                                  $i ~ /_(found|outside)=/ && $0 ~ /scenario=ftrace/) {
      split($i, kv, "="); k = kv[1]; if ($0 ~ /scenario=ftrace/) sub(/^.*_/, "marker_", k)
      sum[k] += kv[2] } }
  END { printf "guest stage: %d runs, %d boots in %ds; %d conversions judged (%d after the run, %d" \
          " immediate), %d outside their bound\n", runs, boots, secs,
          sum["stamps"] + sum["immediate"], sum["stamps"], sum["immediate"],
          sum["outside"] + sum["immediate_outside"]
        printf "ftrace: %d kernel timestamps judged, %d outside their bound\n", sum["marker_found"],
          sum["marker_outside"] }' 
if [ ${#failed[@]} -gt 0 ]; then
  # The evidence of each failed run, here at the end where a short log still shows it:
  # the lag a rate fault left (FTS-LAG), the stamping thread's stop at the fault, the
  # first misses. The whole console, record and misses stay in $FTS_OUT/guest.
  for s in "${failed[@]}"; do
    log=${FTS_OUT:-$FTS_TOP/out}/guest/${s/:/-}.log
    [ -f "$log" ] || continue
    echo "evidence of $s:"
    tr -d '\r' < "$log" | grep -a -E '^FTS-LAG|^misses \(' -A5 | grep -a -v '^--$' | sed 's/^/    /'
    tr -d '\r' < "$log" | grep -a -o 'fault_gap_us=[0-9.]*' | sed 's/^/    /'
  done
  echo "guest scenarios failed: ${failed[*]} (reproduce one: scripts/guest/run-scenario [KIND:]NAME)"
  exit 1
fi
[ ${#skipped[@]} -eq 0 ] || echo "guest runs skipped (expected here): ${skipped[*]}"
echo "every guest scenario passed"
