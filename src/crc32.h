/* crc32.h - crc32.c's interface: the CRC-32 every block of a history or trace file
 * carries (docs/faststamp-history.5). Not installed. */
#ifndef FTS__CRC32_H
#define FTS__CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, the one of zlib and Ethernet) of len bytes, continuing from crc
 * (0 to start). Carry-less multiplication on x86_64 (PCLMULQDQ) and the CRC32
 * instructions on aarch64 where the CPU has them, eight bytes a step from tables
 * elsewhere: the same value on every path. Thread-safe, async-signal-safe after the
 * first call. */
uint32_t fts__crc32(uint32_t crc, const void *p, size_t len);
/* The same, from the tables alone (the reference the fast paths are tested against). */
uint32_t fts__crc32_tables(uint32_t crc, const void *p, size_t len);
/* The path fts__crc32 takes on this CPU: "pclmul", "armv8-crc" or "tables". */
const char *fts__crc32_path(void);

#endif /* FTS__CRC32_H */
