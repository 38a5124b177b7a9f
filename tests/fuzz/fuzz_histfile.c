/* fuzz_histfile.c - libFuzzer target for history files (fts_calib_load): the input is
 * a file. A file is either refused (EBADMSG or ENODATA, or ENOMEM/EIO) or gives a
 * history that holds two knots at least, converts without crashing (ERANGE the only
 * failure inside its range), takes samples only if it is a record (EPERM otherwise),
 * and saves to a file that loads to the same conversions. Two promises of the format
 * (faststamp-history(5)) are checked against the harness's own walk of the blocks:
 *   - every byte under a checksum: a file of format 2 or 3 with a whole block whose header
 *     or payload CRC is wrong is refused (EBADMSG);
 *   - a record cut at any byte loads as the file cut at the end of its last whole
 *     block.
 * The checksums are checked in this build too: the custom mutator below knows the
 * block structure (types, lengths, padding, the order of blocks, cuts) and writes
 * right checksums after three mutations in four, so that its files reach the checks
 * behind them, and wrong ones after the fourth. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "faststamp.h"
#include "crc32.h"
#include "histfile.h"
#include "fuzz.h"
#include "clock.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static int file_of(const void *p, size_t n)
{
	int fd = memfd_create("fuzz-histfile", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	return fd;
}

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the harness's walk of a file's blocks ----------------------------------------- */

#define MAXB 256

struct walk {
	uint32_t version;            /* 0: not a history file's header */
	size_t hlen, n;              /* block header size; blocks found */
	size_t at[MAXB];             /* where each block starts */
	uint32_t type[MAXB], len[MAXB];
	int whole[MAXB];             /* the file holds its payload and padding */
	int bad_crc;                 /* index + 1 of the first whole block with a wrong CRC */
	int has_segs;
	size_t end;                  /* where the walk stopped */
	int cut;                     /* the file ends inside a block its writer wrote (a
					header cut short, or whole with its CRC, magic and
					length right) */
};

static size_t padded(uint32_t len)
{
	return (size_t)len + (8 - len % 8) % 8;
}

static void walk(const uint8_t *d, size_t size, struct walk *w)
{
	size_t at = 16;

	memset(w, 0, sizeof(*w));
	if (size < 16 || memcmp(d, FTS__FILE_MAGIC, 8) || rd32(d + 12) ||
	    rd32(d + 8) < 1 || rd32(d + 8) > FTS__FILE_VERSION)
		return;
	w->version = rd32(d + 8);
	w->hlen = w->version == 1 ? 16 : FTS__BLOCK_HEAD_BYTES;
	w->cut = size > 16 && size < 16 + w->hlen;   /* inside the first block's header */
	while (at + w->hlen <= size && w->n < MAXB) {
		size_t k = w->n++;
		uint32_t len = rd32(d + at + 8);
		w->at[k] = at;
		w->type[k] = rd32(d + at + 4);
		w->len[k] = len;
		w->has_segs |= w->type[k] == FTS__BLK_SEGS || w->type[k] == FTS__BLK_CLKSEGS;
		w->whole[k] = at + w->hlen + padded(len) <= size;
		if (w->version >= 2 && !w->bad_crc) {
			uint32_t seed = k ? 0 : fts__crc32(0, d, 16);
			if (fts__crc32(seed, d + at, 20) != rd32(d + at + 20) || rd32(d + at + 16))
				w->bad_crc = (int)k + 1;
			else if (w->whole[k] &&
				 fts__crc32(0, d + at + w->hlen, padded(len)) != rd32(d + at + 12))
				w->bad_crc = (int)k + 1;
		}
		if (!w->whole[k])
			w->cut = !w->bad_crc && rd32(d + at) == FTS__BLOCK_MAGIC &&
				 len <= (1u << 30) && w->type[k] != FTS__BLK_SEGS &&
				 w->type[k] != FTS__BLK_CLKSEGS;
		if (!w->whole[k] || (w->version >= 2 && w->bad_crc))
			break;   /* a cut, or a length not to be trusted */
		at += w->hlen + padded(len);
	}
	w->end = at;
	if (at < size && at + w->hlen > size)
		w->cut = 1;   /* inside a block's header: nothing of it is read */
}

/* Write right checksums into every block the file holds (header and, if whole,
 * payload), as its writer would have. */
static void fix_crcs(uint8_t *d, size_t size)
{
	struct walk w;
	size_t at = 16;

	walk(d, size, &w);
	if (!w.version)
		return;
	for (size_t k = 0; at + w.hlen <= size && k < MAXB; k++) {
		uint32_t len = rd32(d + at + 8);
		int whole = at + w.hlen + padded(len) <= size;
		if (whole)
			wr32(d + at + 12, fts__crc32(0, d + at + w.hlen,
						     w.version == 1 ? len : padded(len)));
		if (w.version >= 2) {
			wr32(d + at + 16, 0);
			wr32(d + at + 20, fts__crc32(k ? 0 : fts__crc32(0, d, 16), d + at, 20));
		}
		if (!whole)
			break;
		at += w.hlen + padded(len);
	}
}

/* ---- the mutator ------------------------------------------------------------------- */

static uint32_t next(uint32_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 17;
	*r ^= *r << 5;
	return *r;
}

size_t LLVMFuzzerCustomMutator(uint8_t *d, size_t size, size_t max, unsigned int seed)
{
	uint32_t r = seed * 2654435761u + 1;
	struct walk w;
	size_t k, at, blen;

	walk(d, size, &w);
	if (!w.version || w.n == 0 || next(&r) % 8 == 0)
		return LLVMFuzzerMutate(d, size, max);
	k = next(&r) % w.n;
	at = w.at[k];
	blen = w.whole[k] ? w.hlen + padded(w.len[k]) : size - at;
	switch (next(&r) % 8) {
	case 0: {   /* its type: another known one, optional, or any */
		static const uint32_t types[] = { FTS__BLK_HEAD, FTS__BLK_SEGS, FTS__BLK_SAMPLES,
						  FTS__BLK_EVENT, FTS__BLK_CLKSAMPLES,
						  FTS__BLK_CLKSEGS, FTS__BLK_OPTIONAL | 7, 9, 0 };
		uint32_t t = types[next(&r) % 9];
		wr32(d + at + 4, next(&r) % 4 ? t : rd32(d + at + 4) ^ (1u << (next(&r) % 32)));
		break;
	}
	case 1: {   /* its length: a little off, beyond the file, or anything */
		uint32_t len = w.len[k], v;
		switch (next(&r) % 4) {
		case 0: v = len + 1 + next(&r) % 8; break;
		case 1: v = len > 8 ? len - 1 - next(&r) % 8 : 0; break;
		case 2: v = (uint32_t)(size - at) + next(&r) % 64; break;
		default: v = next(&r) % 2 ? next(&r) : (1u << 30) + next(&r) % 3 - 1;
		}
		wr32(d + at + 8, v);
		break;
	}
	case 2:   /* its payload, mutated in place */
		if (w.whole[k] && w.len[k]) {
			uint8_t *p = d + at + w.hlen;
			size_t m = LLVMFuzzerMutate(p, w.len[k], w.len[k]);
			memset(p + m, 0, w.len[k] - m);
		}
		break;
	case 3:   /* dropped */
		memmove(d + at, d + at + blen, size - at - blen);
		size -= blen;
		break;
	case 4:   /* repeated */
		if (w.whole[k] && size + blen <= max) {
			memmove(d + at + blen, d + at, size - at);
			size += blen;
		}
		break;
	case 5:   /* cut at any byte */
		size = at + next(&r) % (size - at + 1);
		break;
	case 6:   /* a SAMPLES or an unknown optional block added at the end */
		if (size + 24 + 64 <= max) {
			uint8_t *b = d + size;
			uint32_t t = next(&r) % 2 ? FTS__BLK_SAMPLES : FTS__BLK_OPTIONAL | 9;
			memset(b, 0, w.hlen + 64);
			wr32(b, FTS__BLOCK_MAGIC);
			wr32(b + 4, t);
			wr32(b + 8, 64);
			for (int i = 0; i < 64; i++)
				b[w.hlen + i] = (uint8_t)next(&r);
			size += w.hlen + 64;
		}
		break;
	default:   /* the padding, or a byte of the header not used otherwise */
		if (w.whole[k] && padded(w.len[k]) > w.len[k])
			d[at + w.hlen + w.len[k]] ^= (uint8_t)(1u << (next(&r) % 8));
		else if (w.hlen == FTS__BLOCK_HEAD_BYTES)
			d[at + 16 + next(&r) % 4] ^= (uint8_t)(1u << (next(&r) % 8));
	}
	if (next(&r) % 4)
		fix_crcs(d, size);
	return size;
}

/* ---- the checks -------------------------------------------------------------------- */

static struct fts_calib *load(const uint8_t *data, size_t size, int *err)
{
	int fd = file_of(data, size);
	struct fts_calib *c;

	errno = 0;
	c = fts_calib_load(fd);
	*err = errno;
	close(fd);
	return c;
}

/* The same answers from two loads (both refused alike, or the same conversions). */
static void same(struct fts_calib *a, int ea, struct fts_calib *b, int eb)
{
	uint64_t o, n;

	CHECK(!a == !b);
	if (!a) {
		CHECK(ea == eb);
		return;
	}
	CHECK(fts_calib_count(a) == fts_calib_count(b));
	CHECK(fts_calib_range(a, &o, &n) == 0);
	for (int i = 0; i <= 32; i++) {
		uint64_t x = o + (uint64_t)((unsigned __int128)(n - o) * (unsigned)i / 32);
		int64_t n1 = 0, e1 = 0, n2 = 0, e2 = 0;
		int r1 = fts_calib_convert(a, x, &n1, &e1);
		int r2 = fts_calib_convert(b, x, &n2, &e2);
		CHECK(r1 == r2 && (r1 != 0 || (n1 == n2 && e1 == e2)));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fts_calib *c, *c2;
	struct walk w;
	uint64_t o, n;
	int fd2, err;

	walk(data, size, &w);
	c = load(data, size, &err);
	if (w.bad_crc)   /* every byte is under a checksum */
		CHECK(!c && (err == EBADMSG || err == ENOMEM));
	/* A record cut inside a block loads as the file cut where that block starts. */
	if (w.version >= 2 && w.cut && !w.has_segs && w.end < size) {
		struct fts_calib *a, *b;
		int ea, eb;
		size_t cut = w.end + (size - w.end) / 2;
		a = load(data, cut, &ea);
		b = load(data, w.end, &eb);
		same(a, ea, b, eb);
		fts_calib_free(a);
		fts_calib_free(b);
	}
	/* Every clock's histories: refused alike when the file is, else CLOCK_REALTIME's is
	 * the same (the other clocks' blocks, which fts_calib_load only checks for their
	 * checksums, may still be refused). */
	{
		struct fts_calib *all[FTS__NCLK];
		int fa = file_of(data, size), rc = fts__histfile_load_clocks(fa, FTS__ALL_CLOCKS, all, NULL);
		close(fa);
		if (!c)
			CHECK(rc < 0);
		if (rc == 0) {
			same(c, err, all[FTS__CLK_REALTIME], 0);
			for (int k = 0; k < FTS__NCLK; k++)
				fts_calib_free(all[k]);
		}
	}
	if (!c) {
		CHECK(err == EBADMSG || err == ENODATA || err == ENOMEM || err == EIO);
		return 0;
	}
	CHECK(fts_calib_count(c) >= 2);
	CHECK(fts_calib_range(c, &o, &n) == 0 && o <= n);
	fd2 = memfd_create("fuzz-histfile-2", MFD_CLOEXEC);
	CHECK(fd2 >= 0 && fts_calib_save(c, fd2) == 0 && lseek(fd2, 0, SEEK_SET) == 0);
	errno = 0;
	c2 = fts_calib_load(fd2);
	err = errno;
	close(fd2);
	CHECK(c2 != NULL);
	same(c, 0, c2, err);
	for (int i = 0; i <= 32; i++) {
		uint64_t x = o + (uint64_t)((unsigned __int128)(n - o) * (unsigned)i / 32);
		int64_t ns = 0, e = 0;
		int rc = fts_calib_convert(c, x, &ns, &e);
		CHECK(rc == 0 || errno == ERANGE);
		CHECK(rc != 0 || e >= 0);
	}
	/* beyond both ends: an answer or ERANGE */
	{
		int64_t ns, e;
		CHECK(fts_calib_convert(c, 0, &ns, &e) == 0 || errno == ERANGE);
		CHECK(fts_calib_convert(c, UINT64_MAX, &ns, &e) == 0 || errno == ERANGE);
	}
	errno = 0;
	if (fts_calib_add(c, n + 1000, 0, n + 1000) < 0)
		CHECK(errno == EPERM || errno == EINVAL || errno == ENOMEM);
	fts_calib_free(c2);
	fts_calib_free(c);
	return 0;
}
