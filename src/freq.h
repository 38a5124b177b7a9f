/* freq.h - freq.c: the counter's frequency. Not installed. */
#ifndef FTS__FREQ_H
#define FTS__FREQ_H

#include <stddef.h>
#include <stdint.h>

/* Measure the counter frequency against CLOCK_MONOTONIC_RAW over about ms milliseconds.
 * 0 or negative errno. */
int fts__freq_measure(uint64_t (*read)(void), int ms, uint64_t *hz, uint64_t *err_ppb);
/* The frequency the library uses (hint if it agrees with the measurement, else the
 * measurement), measured once; describe the choice in source. 0 on generic. */
uint64_t fts__freq(char *source, size_t len);

#endif /* FTS__FREQ_H */
