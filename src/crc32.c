/* crc32.c - CRC-32 (IEEE 802.3, reflected, as zlib's) for the blocks of history and
 * trace files. A trace's drain puts every event under it, so its cost per byte is a
 * cost per event: carry-less multiplication folds 64 bytes a step on x86_64 (the
 * method of Intel's white paper "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ"), the CRC32X instruction takes 8 bytes on aarch64, and elsewhere tables
 * take 8 bytes a step (slicing-by-8). Which one runs is chosen at the first call
 * from what the CPU says it has; all give the same value (tests/test_parsers.c). */
#include <pthread.h>
#include <string.h>

#include "crc32.h"
#include "le.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#endif

#define POLY 0xedb88320u   /* x^32 + x^26 + ... + 1, bit-reversed */

static uint32_t crc_t[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
enum { TABLES, PCLMUL, ARMV8 };
static int crc_path;

/* The CRC's state (not inverted) after len more bytes, from the tables. */
static uint32_t by_tables(uint32_t c, const unsigned char *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		uint32_t a = c ^ fts__le_get32(p), b = fts__le_get32(p + 4);
		c = crc_t[7][a & 0xff] ^ crc_t[6][a >> 8 & 0xff] ^ crc_t[5][a >> 16 & 0xff] ^
		    crc_t[4][a >> 24] ^ crc_t[3][b & 0xff] ^ crc_t[2][b >> 8 & 0xff] ^
		    crc_t[1][b >> 16 & 0xff] ^ crc_t[0][b >> 24];
	}
	while (len--)
		c = (c >> 8) ^ crc_t[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
/* The constants are powers of x modulo the polynomial, bit-reversed and shifted as
 * the folding needs them: x^(4*128+32) and x^(4*128-32) (fold 512 bits over 512),
 * x^(128+32) and x^(128-32) (128 over 128), x^64 (64 bits to 32), then the
 * polynomial and floor(x^64 / P) for Barrett's reduction to the 32-bit remainder. */
#define K1 0x154442bd4ull
#define K2 0x1c6e41596ull
#define K3 0x1751997d0ull
#define K4 0x0ccaa009eull
#define K5 0x163cd6124ull
#define KP 0x1db710641ull
#define KU 0x1f7011641ull

__attribute__((target("pclmul"))) static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/* len >= 64, a multiple of 16. */
__attribute__((target("pclmul"))) static uint32_t by_pclmul(uint32_t c, const unsigned char *p,
							    size_t len)
{
	const __m128i k12 = _mm_set_epi64x((long long)K2, (long long)K1);
	const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)K5);
	const __m128i pu = _mm_set_epi64x((long long)KU, (long long)KP);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x1 = _mm_loadu_si128((const void *)p), x2 = _mm_loadu_si128((const void *)(p + 16));
	__m128i x3 = _mm_loadu_si128((const void *)(p + 32)), x4 = _mm_loadu_si128((const void *)(p + 48));
	__m128i t;

	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		x1 = fold(x1, k12, _mm_loadu_si128((const void *)p));
		x2 = fold(x2, k12, _mm_loadu_si128((const void *)(p + 16)));
		x3 = fold(x3, k12, _mm_loadu_si128((const void *)(p + 32)));
		x4 = fold(x4, k12, _mm_loadu_si128((const void *)(p + 48)));
	}
	x1 = fold(fold(fold(x1, k34, x2), k34, x3), k34, x4);
	for (; len >= 16; p += 16, len -= 16)
		x1 = fold(x1, k34, _mm_loadu_si128((const void *)p));
	/* 128 bits to 64, 64 to 32, and Barrett's reduction */
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k34, 0x10));
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
			   _mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5, 0x00));
	t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), pu, 0x10), low32);
	x1 = _mm_xor_si128(x1, _mm_clmulepi64_si128(t, pu, 0x00));
	return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x1, 4));
}
#endif

#if defined(__aarch64__)
__attribute__((target("+crc"))) static uint32_t by_armv8(uint32_t c, const unsigned char *p,
							   size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __crc32d(c, v);
	}
	while (len--)
		c = __crc32b(c, *p++);
	return c;
}
#endif

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		crc_t[0][i] = c;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t i = 0; i < 256; i++)
			crc_t[k][i] = (crc_t[k - 1][i] >> 8) ^ crc_t[0][crc_t[k - 1][i] & 0xff];
#if defined(__x86_64__)
	{
		unsigned a, b, c, d;
		if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL))
			crc_path = PCLMUL;
	}
#elif defined(__aarch64__) && defined(HWCAP_CRC32)
	if (getauxval(AT_HWCAP) & HWCAP_CRC32)
		crc_path = ARMV8;
#endif
}

uint32_t fts__crc32_tables(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~by_tables(~crc, buf, len);
}

uint32_t fts__crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
	if (crc_path == PCLMUL && len >= 64) {
		size_t n = len & ~(size_t)15;
		c = by_pclmul(c, p, n);
		p += n;
		len -= n;
	}
#elif defined(__aarch64__)
	if (crc_path == ARMV8)
		return ~by_armv8(c, p, len);
#endif
	return ~by_tables(c, p, len);
}

const char *fts__crc32_path(void)
{
	pthread_once(&crc_once, crc_init);
	return crc_path == PCLMUL ? "pclmul" : crc_path == ARMV8 ? "armv8-crc" : "tables";
}
