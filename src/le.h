/* le.h - the little-endian fields of the history and trace files (and the CRC's
 * words), read and written a byte at a time: any alignment, any host byte order. One
 * copy for every file that reads or writes them; inline, no .c. Not installed. */
#ifndef FTS__LE_H
#define FTS__LE_H

#include <stdint.h>

static inline uint32_t fts__le_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t fts__le_get64(const unsigned char *p)
{
	return fts__le_get32(p) | (uint64_t)fts__le_get32(p + 4) << 32;
}

static inline void fts__le_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

static inline void fts__le_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

#endif /* FTS__LE_H */
