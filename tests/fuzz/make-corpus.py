#!/usr/bin/env python3
"""Write the seed corpus for the fuzzers into tests/fuzz/corpus/<target>/.

The seeds are small valid inputs in each target's input format (see the comments at
the top of each fuzz_*.c): the fuzzer mutates from there. Re-run after changing a
format; the output is deterministic."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def u(n, v):
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def calib_header(mode, max_samples, tol=0, flags=0, probes=(0, 0)):
    return bytes([mode, max_samples, tol, flags]) + u(8, probes[0]) + u(8, probes[1])


def calib_arbitrary(rng, max_samples, n):
    out = calib_header(0, max_samples, probes=(12345, 1 << 40))
    for i in range(n):
        # op 1: gap, gap shift, width, width shift, ref delta, ref shift
        out += bytes([1]) + u(4, rng.randrange(1, 5000)) + bytes([8]) + \
            u(2, rng.randrange(0, 64)) + bytes([0]) + u(4, rng.randrange(1, 4000)) + \
            bytes([10])
        if i % 4 == 3:
            out += bytes([5]) + u(8, rng.getrandbits(64)) + bytes([0])  # probe inside
    out += bytes([4]) + u(8, (1 << 64) - 1)     # probe far out
    out += bytes([2, 9, 9, 3])                  # extremes
    out += bytes([3, 1]) + u(8, 1 << 62)        # equal bracket ends
    return out


def calib_consistent(rng, mode, max_samples, n, start_sel=0, start=1000, ref0=0,
                     base=(0x5555, 24), wshift=6, steps_every=0):
    out = calib_header(mode, max_samples)
    out += u(2, base[0]) + bytes([base[1], wshift, start_sel])
    out += u({0: 2, 1: 8, 2: 5}[start_sel], start)
    out += u(8, ref0)
    for i in range(n):
        out += u(4, rng.randrange(0, 1 << wshift)) + u(4, rng.randrange(0, 1 << wshift))
        out += u(4, rng.randrange(1 << 20, 1 << 24)) + bytes([4])
        if mode == 1:
            out += u(2, rng.randrange(0, 1001))
        step = steps_every and i % steps_every == steps_every - 1
        out += bytes([1 if step else 0])
        if step and mode == 2:
            out += u(4, rng.choice([-1, 1]) * rng.randrange(1, 1 << 20)) + bytes([8])
            out += u(8, rng.getrandbits(64))
        out += u(8, rng.getrandbits(64))  # probe selector
    return out


def main():
    rng = random.Random(20240601)
    write("fuzz_calib", "arbitrary-8", calib_arbitrary(rng, 8, 24))
    write("fuzz_calib", "arbitrary-default", calib_arbitrary(rng, 0, 12))
    write("fuzz_calib", "bad-max-samples", calib_header(0, 5))
    write("fuzz_calib", "slew-8", calib_consistent(rng, 1, 8, 40))
    write("fuzz_calib", "slew-16-wide-brackets",
          calib_consistent(rng, 1, 16, 30, wshift=16, ref0=1700000000 * 10**9))
    write("fuzz_calib", "slew-near-max-counter",
          calib_consistent(rng, 1, 8, 20, start_sel=2, start=1 << 36))
    write("fuzz_calib", "slew-huge-ref",
          calib_consistent(rng, 1, 8, 20, ref0=(1 << 63) - (1 << 50)))
    write("fuzz_calib", "steps-8", calib_consistent(rng, 2, 8, 40, steps_every=4))
    write("fuzz_calib", "steps-default", calib_consistent(rng, 2, 0, 30, steps_every=3))
    write("fuzz_calib", "steps-fast-counter",
          calib_consistent(rng, 2, 12, 30, base=(3, 30), steps_every=5))

    for name, ln, text in [
        ("tsc", 32, b"tsc\n"),
        ("hpet-spaces", 32, b"  hpet  \n"),
        ("kvm-clock", 32, b"kvm-clock\n"),
        ("acpi-pm-short-buffer", 4, b"acpi_pm\n"),
        ("empty", 32, b"\n"),
        ("two-words", 16, b"arch_sys_counter riscv_clocksource\n"),
        ("tabs-cr", 8, b"\t\r\vtsc\r\n"),
    ]:
        write("fuzz_parse_word", name, bytes([ln]) + text)

    cpuinfo = (b"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
               b"model name\t: Intel(R) Xeon(R) CPU\n"
               b"flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov "
               b"constant_tsc rep_good nopl xtopology nonstop_tsc cpuid tsc_known_freq "
               b"pni pclmulqdq rdtscp lm\nbugs\t\t: spectre_v1\n\n"
               b"processor\t: 1\nflags\t\t: fpu tsc\n")
    for flag in [b"constant_tsc", b"nonstop_tsc", b"rdtscp", b"tsc_known_freq", b"invtsc"]:
        write("fuzz_cpuinfo_flag", flag.decode(), flag + b"\n" + cpuinfo)
    write("fuzz_cpuinfo_flag", "aarch64", b"evtstrm\nprocessor\t: 0\nBogoMIPS\t: 50.00\n"
          b"Features\t: fp asimd evtstrm aes\n")
    write("fuzz_cpuinfo_flag", "no-colon", b"tsc\nflags tsc\n")

    # fuzz_events: a layout byte, then an events block's payload (src/event.h)
    def zigzag(d):
        d &= (1 << 64) - 1
        return ((d << 1) ^ (-(d >> 63) & ((1 << 64) - 1))) & ((1 << 64) - 1)

    def nbytes(v):
        return (v.bit_length() + 7) // 8

    def compact(recs):
        out, last, lf, ltype = b"", 0, [0] * 4, None
        for stamp, typ, kind, fields in recs:
            nf = len(fields)
            tb = 0 if typ == ltype else 1 if typ < 256 else 2
            vals = [zigzag(stamp - last)] + [zigzag(f - lf[k]) for k, f in enumerate(fields)]
            nib = [nbytes(v) for v in vals] + [0]
            lens = bytes(nib[j] | nib[j + 1] << 4 for j in range(0, (nf + 2) // 2 * 2, 2))
            out += bytes([nf | kind << 3 | tb << 5]) + lens + u(tb, typ) if tb else \
                bytes([nf | kind << 3]) + lens
            out += b"".join(u(nbytes(v), v) for v in vals)
            last, ltype = stamp, typ
            for k, f in enumerate(fields):
                lf[k] = f
        return out

    def events_head(tid, count, dropped=0):
        return u(4, tid) + u(4, count) + u(8, dropped)

    recs = [(1 << 40, 0, 0, [1, 2]), ((1 << 40) + 130, 0, 0, [2, 60]),
            ((1 << 40) + 90, 3, 1, [7]), ((1 << 40) + 400, 3, 2, []),
            ((1 << 40) + 401, 300, 0, [2**64 - 1, 0, 2**63, 5]), ((1 << 63) | 12345, 1, 0, [])]
    write("fuzz_events", "compact", bytes([2]) + events_head(77, len(recs), 3) + compact(recs))
    write("fuzz_events", "compact-empty", bytes([2]) + events_head(77, 0, 9))
    packed = b"".join(u(8, st) + u(4, t | k << 16 | len(f) << 20) + b"".join(u(8, x) for x in f)
                      for st, t, k, f in recs)
    write("fuzz_events", "packed", bytes([1]) + events_head(77, len(recs)) + packed)
    full = b"".join(u(8, st) + u(4, t | k << 16 | len(f) << 20) + u(4, 77) +
                    b"".join(u(8, x) for x in (f + [0] * 4)[:4]) for st, t, k, f in recs)
    write("fuzz_events", "events", bytes([0]) + events_head(0, len(recs)) + full)


if __name__ == "__main__":
    main()
