/* fuzz.h - shared by the libFuzzer targets: the entry point and invariant checks. */
#ifndef FTS_FUZZ_H
#define FTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant traps, so libFuzzer reports the input as a crash. */
#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s: invariant failed at line %d: %s\n", __FILE__, \
				__LINE__, #cond);                                      \
			__builtin_trap();                                              \
		}                                                                      \
	} while (0)

/* Whitespace as the parsers see it (C locale). */
static inline int fuzz_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

#endif
