/* histfile.c - history files (faststamp-history(5)): a header, then blocks, each with
 * its length, a CRC-32 of its payload and one of its header (the first block's also
 * covers the file header): every byte of a file is under a checksum, and a block
 * header that holds says what its writer wrote, so a file that ends inside a block
 * was cut there. Everything little-endian. A reader trusts nothing: every length is
 * checked against what is left, every count against its block, every segment's order
 * and fixed point, before a byte of it is used. Format 3 holds every clock of the
 * process clock (a sample of each clock in a bracket of its own; a saved history a
 * clock); formats 1 (16-byte block headers, the payload's CRC only) and 2 hold one
 * history, read as CLOCK_REALTIME's. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32.h"
#include "histfile.h"
#include "history.h"
#include "internal.h"
#include "bracket.h"
#include "calib.h"
#include "clock.h"
#include "now.h"
#include "sysfs.h"
#include "le.h"

#define HEAD_BYTES 80
#define END_BYTES 48
#define SEG_BYTES 40
#define SEGS_FIXED (16 + 2 * END_BYTES)
#define MAX_BLOCK ((uint32_t)1 << 30)   /* 1 GiB: 26 M segments, a block at most */


const char *const fts__histfile_kind_names[FTS__KIND_N] = { "other (fts_calib)", "tsc", "cntvct",
							"rdtime" };
/* The boot's id, read once: boot_state 0 unread, 1 one thread is storing it, 2 boot holds
 * it. Not pthread_once: its completion is a futex wake, a system call more on a shared
 * history's attach; a thread that loses the race keeps the id it read itself. */
static uint8_t boot[16];
static int boot_state;

/* One read, not a loop to end of file: the kernel hands the 37 bytes over at once (a
 * short read fails to parse, and is taken as a failed one: zeros). */
static void read_boot_id(uint8_t id[16])
{
	char text[64];
	ssize_t r = -1;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		do
			r = read(fd, text, sizeof(text) - 1);
		while (r < 0 && errno == EINTR);
		close(fd);
	}
	if (r >= 0)
		text[r] = '\0';
	if (r < 0 || fts__sysfs_parse_boot_id(text, id) < 0)
		memset(id, 0, 16);
}

/* A boot's id does not change while it lasts. */
void fts__histfile_boot_id(uint8_t id[16])
{
	int unread = 0;

	if (__atomic_load_n(&boot_state, __ATOMIC_ACQUIRE) == 2) {
		memcpy(id, boot, 16);
		return;
	}
	read_boot_id(id);
	if (__atomic_compare_exchange_n(&boot_state, &unread, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		memcpy(boot, id, 16);
		__atomic_store_n(&boot_state, 2, __ATOMIC_RELEASE);
	}
}

/* ---- writing ----------------------------------------------------------------------- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void block_head(unsigned char h[FTS__BLOCK_HEAD_BYTES], uint32_t type,
		       const void *payload, uint32_t len, uint32_t seed)
{
	static const unsigned char zero[8];
	uint32_t pad = (8 - len % 8) % 8;

	fts__le_put32(h, FTS__BLOCK_MAGIC);
	fts__le_put32(h + 4, type);
	fts__le_put32(h + 8, len);
	fts__le_put32(h + 12, fts__crc32(fts__crc32(0, payload, len), zero, pad));
	fts__le_put32(h + 16, 0);
	fts__le_put32(h + 20, fts__crc32(seed, h, 20));
}

/* A block (format 2): its header's CRC continues from seed, which is the file
 * header's CRC for the first block (so that it covers the file header too), else 0. */
static int write_block(int fd, uint32_t type, const void *payload, uint32_t len, uint32_t seed)
{
	static const unsigned char zero[8];
	unsigned char h[FTS__BLOCK_HEAD_BYTES];
	int rc;

	block_head(h, type, payload, len, seed);
	if ((rc = write_all(fd, h, sizeof(h))) < 0 || (rc = write_all(fd, payload, len)) < 0)
		return rc;
	return write_all(fd, zero, (8 - len % 8) % 8);
}

size_t fts__histfile_put_block(unsigned char *out, uint32_t type, uint32_t len)
{
	uint32_t pad = (8 - len % 8) % 8;

	memset(out + FTS__BLOCK_HEAD_BYTES + len, 0, pad);
	block_head(out, type, out + FTS__BLOCK_HEAD_BYTES, len, 0);
	return FTS__BLOCK_HEAD_BYTES + len + pad;
}

int fts__histfile_write_block(int fd, uint32_t type, const void *payload, uint32_t len)
{
	return write_block(fd, type, payload, len, 0);
}

int fts__histfile_write_header(int fd, const struct fts__head *hd)
{
	unsigned char f[16], h[HEAD_BYTES] = { 0 };
	int rc;

	memcpy(f, FTS__FILE_MAGIC, 8);
	fts__le_put32(f + 8, FTS__FILE_VERSION);
	fts__le_put32(f + 12, 0);
	fts__le_put32(h, hd->kind);
	fts__le_put64(h + 8, hd->counter_hz);
	memcpy(h + 16, hd->boot_id, 16);
	memcpy(h + 32, hd->clocksource, 31);
	fts__le_put64(h + 64, (uint64_t)hd->created_ns);
	if ((rc = write_all(fd, f, sizeof(f))) < 0)
		return rc;
	return write_block(fd, FTS__BLK_HEAD, h, sizeof(h), fts__crc32(0, f, sizeof(f)));
}

size_t fts__histfile_put_sample(unsigned char *buf, uint64_t before, int64_t ref, uint64_t after,
				uint32_t flags)
{
	fts__le_put64(buf, before);
	fts__le_put64(buf + 8, (uint64_t)ref);
	fts__le_put64(buf + 16, after);
	fts__le_put32(buf + 24, flags);
	fts__le_put32(buf + 28, 0);
	return FTS__SAMPLE_BYTES;
}

size_t fts__histfile_put_clksample(unsigned char *buf, const struct fts__cbracket k[FTS__NCLK],
				   uint32_t steps)
{
	for (int j = 0; j < FTS__NCLK; j++) {
		fts__le_put64(buf + 24 * j, k[j].b);
		fts__le_put64(buf + 24 * j + 8, (uint64_t)k[j].ns);
		fts__le_put64(buf + 24 * j + 16, k[j].a);
	}
	fts__le_put32(buf + 24 * FTS__NCLK, steps);
	fts__le_put32(buf + 24 * FTS__NCLK + 4, 0);
	return FTS__CLKSAMPLE_BYTES;
}

size_t fts__histfile_put_event(unsigned char *buf, const struct fts__event *e)
{
	memset(buf, 0, FTS__EVENT_BYTES);
	fts__le_put32(buf, e->type);
	fts__le_put64(buf + 8, e->counter);
	fts__le_put64(buf + 16, (uint64_t)e->realtime_ns);
	fts__le_put64(buf + 24, (uint64_t)e->value_ns);
	memcpy(buf + 32, e->what, 63);
	return FTS__EVENT_BYTES;
}

static void put_rec(unsigned char *p, uint64_t key, const struct fts__rec *r)
{
	fts__le_put64(p, key);
	fts__le_put64(p + 8, (uint64_t)r->r0);
	fts__le_put64(p + 16, (uint64_t)r->mult);
	fts__le_put64(p + 24, r->err);
	fts__le_put32(p + 32, r->shift);
	fts__le_put32(p + 36, r->flags);
}

/* A line carried on at an end: its record, then its growth. */
static void put_line(unsigned char *p, const struct fts__line *l)
{
	struct fts__rec r = { .r0 = l->r0, .mult = l->mult, .err = l->err, .shift = l->shift,
			      .flags = l->flags };
	put_rec(p, l->c0, &r);
	fts__le_put64(p + SEG_BYTES, (uint64_t)l->grow);
}

/* The SEGS payload of state p into a new *out (pre bytes left before it): 0, or
 * -ENODATA (no segment), -EBADMSG (not a state its geometry holds), -EFBIG, -ENOMEM. */
static int segs_copy(const struct fts_calib *c, const struct fts__pub *p, size_t pre,
		     unsigned char **out, size_t *outlen)
{
	size_t n = (size_t)FTS__LD(p->nfinal) + FTS__LD(p->nprov), len;
	struct fts__line hl, tl;
	unsigned char *b, *q;

	if (!FTS__LD(p->newest) || n == 0)
		return -ENODATA;
	if (n > (size_t)c->dircap * FTS__CHUNK_RECS + FTS__MAX_PROV)
		return -EBADMSG;   /* more than its own geometry holds (a hostile file) */
	len = pre + SEGS_FIXED + n * SEG_BYTES;
	if (len > MAX_BLOCK)
		return -EFBIG;
	if (!(b = malloc(len)))
		return -ENOMEM;
	q = b + pre;
	fts__end_load(c, &p->head, &hl);
	fts__end_load(c, &p->tail, &tl);
	fts__le_put64(q, n);
	fts__le_put64(q + 8, FTS__LD(p->newest));
	put_line(q + 16, &hl);
	put_line(q + 16 + END_BYTES, &tl);
	for (size_t i = 0; i < n; i++) {
		uint64_t key;
		struct fts__rec r;
		if (fts__pub_segment(c, p, i, &key, &r) < 0) {
			free(b);
			return -EBADMSG;
		}
		put_rec(q + SEGS_FIXED + i * SEG_BYTES, key, &r);
	}
	*out = b;
	*outlen = len;
	return 0;
}

/* The SEGS payload of the state published now, read through the latch as a reader
 * reads (fts__latch_again: -EAGAIN when a history another process writes kept
 * moving). */
static int segs_payload(const struct fts_calib *c, size_t pre, unsigned char **out,
			size_t *outlen)
{
	struct fts__reading rd = { 0 };
	unsigned char *b = NULL;
	size_t len = 0;
	int rc, again;

	do {
		free(b);
		b = NULL;
		rc = segs_copy(c, fts__latch_read(c, &rd), pre, &b, &len);
	} while ((again = fts__latch_again(c, &rd)) > 0);
	if (again < 0 || rc < 0) {
		free(b);
		return again < 0 ? again : rc;
	}
	*out = b;
	*outlen = len;
	return 0;
}

int fts__histfile_save_head(const struct fts_calib *c, int fd, const struct fts__head *h)
{
	unsigned char *b;
	size_t len;
	int rc;

	if ((rc = segs_payload(c, 0, &b, &len)) < 0)
		return rc;
	if ((rc = fts__histfile_write_header(fd, h)) == 0)
		rc = fts__histfile_write_block(fd, FTS__BLK_SEGS, b, (uint32_t)len);
	free(b);
	return rc;
}

/* A CLKSEGS block a clock, in the clocks' order, each naming every clock the file holds:
 * a saved file cut between two of them is found short of a clock. */
int fts__histfile_save_clocks(const struct fts_calib *const c[FTS__NCLK], int fd,
			      const struct fts__head *h)
{
	unsigned held = 0;
	int rc;

	for (int k = 0; k < FTS__NCLK; k++)
		if (c[k] && fts_calib_count(c[k]) >= 2)
			held |= 1u << k;
	if (!(held & 1u << FTS__CLK_REALTIME))
		return -ENODATA;
	if ((rc = fts__histfile_write_header(fd, h)) < 0)
		return rc;
	for (int k = 0; k < FTS__NCLK && rc == 0; k++) {
		unsigned char *b;
		size_t len;
		if (!(held & 1u << k))
			continue;
		if ((rc = segs_payload(c[k], 8, &b, &len)) < 0)
			break;
		fts__le_put32(b, (uint32_t)k);
		fts__le_put32(b + 4, held);
		rc = fts__histfile_write_block(fd, FTS__BLK_CLKSEGS, b, (uint32_t)len);
		free(b);
	}
	return rc;
}

int fts_calib_save(const struct fts_calib *c, int fd)
{
	struct fts__head h = { .kind = FTS__KIND_OTHER };
	int rc;

	if (!c || fd < 0)
		return fts__fail(EINVAL);
	fts__histfile_boot_id(h.boot_id);
	fts__now(CLOCK_REALTIME, &h.created_ns);
	if ((rc = fts__histfile_save_head(c, fd, &h)) < 0)
		return fts__fail(-rc);
	return 0;
}

/* ---- reading ----------------------------------------------------------------------- */

ssize_t fts__histfile_read_at(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t r = off < 0 ? read(fd, p + got, len - got)
				    : pread(fd, p + got, len - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

ssize_t fts__histfile_read_some(int fd, void *buf, size_t len)
{
	return fts__histfile_read_at(fd, buf, len, -1);
}

/* Read exactly len bytes: 1, 0 at the end of the file before any, or negative errno
 * (-EBADMSG: the file ends inside). */
static int read_all(int fd, void *buf, size_t len)
{
	ssize_t got = fts__histfile_read_some(fd, buf, len);

	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 1 : got ? -EBADMSG : 0;
}

/* A block's payload of len bytes into a buffer that grows with what arrives, so a
 * length the file does not back never becomes an allocation. 0 or negative errno. */
static int read_payload(int fd, unsigned char **out, size_t len)
{
	size_t cap = len < 65536 ? len + 1 : 65536, got = 0;
	unsigned char *b = malloc(cap);

	while (b && got < len) {
		size_t want = (len < cap ? len : cap) - got;
		int rc;
		if (!want) {
			unsigned char *nb = realloc(b, cap * 2 > len + 1 ? len + 1 : cap * 2);
			if (!nb)
				break;
			b = nb;
			cap = cap * 2 > len + 1 ? len + 1 : cap * 2;
			continue;
		}
		if ((rc = read_all(fd, b + got, want)) <= 0) {
			free(b);
			return rc ? rc : -EBADMSG;
		}
		got += want;
	}
	if (!b || got < len) {
		free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

/* ---- a block's payload, a piece at a time ------------------------------------------ */

/* Where a payload's bytes come from: the file, read as they are used (a block the
 * file is known to hold whole), or memory (a block read whole first, where the file's
 * length is not known; a history's own state, copied). Each piece is added to the
 * CRC as it is taken, so that a history is built as its bytes arrive, and the memory
 * a load takes is the history's and a piece's, not the file's. */
#define PIECE 40960   /* a multiple of 32 (samples) and 40 (segments) */

struct payload {
	int fd;                      /* -1: from mem */
	const unsigned char *mem;
	size_t left;                 /* bytes not taken yet */
	uint32_t crc;
	unsigned char piece[PIECE];
};

/* The next m bytes (m <= PIECE, m <= left) into p->piece. 0 or -EBADMSG (the file
 * shrank under the reader) or -EIO. */
static int take(struct payload *p, size_t m)
{
	if (p->fd < 0) {
		memcpy(p->piece, p->mem, m);
		p->mem += m;
	} else {
		int rc = read_all(p->fd, p->piece, m);
		if (rc <= 0)
			return rc == -EIO ? -EIO : -EBADMSG;
	}
	p->crc = fts__crc32(p->crc, p->piece, m);
	p->left -= m;
	return 0;
}

/* Take and drop the next m bytes (the rest of a block a reader does not use). */
static int skip(struct payload *p, size_t m)
{
	while (m) {
		size_t k = m < PIECE ? m : PIECE;
		int rc = take(p, k);
		if (rc < 0)
			return rc;
		m -= k;
	}
	return 0;
}

static void get_rec(const unsigned char *p, uint64_t *key, struct fts__rec *r)
{
	*key = fts__le_get64(p);
	r->r0 = (int64_t)fts__le_get64(p + 8);
	r->mult = (int64_t)fts__le_get64(p + 16);
	r->err = fts__le_get64(p + 24);
	r->shift = fts__le_get32(p + 32);
	r->flags = fts__le_get32(p + 36);
}

/* A saved history, from a SEGS payload of len bytes: its fixed part, then its segments
 * a piece at a time, each put when the next one's key (its end) is known. NULL and
 * *err: EBADMSG, ENOMEM, EIO. */
static struct fts_calib *load_segs(struct payload *p, uint32_t len, int *err)
{
	uint64_t n, newest, hk, tk, key = 0, put = 0;
	struct fts__rec hr, tr, r = { 0 };
	struct fts_calib *c = NULL;
	int64_t hg, tg;
	int rc;

	*err = EBADMSG;
	if (len < SEGS_FIXED || (len - SEGS_FIXED) % SEG_BYTES)
		return NULL;
	if ((rc = take(p, SEGS_FIXED)) < 0)
		goto fail;
	n = fts__le_get64(p->piece);
	newest = fts__le_get64(p->piece + 8);
	if (n == 0 || n != (len - SEGS_FIXED) / SEG_BYTES)
		return NULL;
	get_rec(p->piece + 16, &hk, &hr);
	hg = (int64_t)fts__le_get64(p->piece + 16 + SEG_BYTES);
	get_rec(p->piece + 16 + END_BYTES, &tk, &tr);
	tg = (int64_t)fts__le_get64(p->piece + 16 + END_BYTES + SEG_BYTES);
	if (!(c = fts__calib_new_loaded(n))) {
		*err = errno;
		return NULL;
	}
	for (uint64_t i = 0; i < n;) {
		size_t m = (n - i) * SEG_BYTES < PIECE ? (size_t)(n - i) * SEG_BYTES : PIECE;
		if ((rc = take(p, m)) < 0)
			goto fail;
		for (size_t o = 0; o < m; o += SEG_BYTES, i++) {
			uint64_t k;
			struct fts__rec nr;
			get_rec(p->piece + o, &k, &nr);
			if (i && fts__calib_put_loaded(c, put++, key, k, r) < 0)
				goto bad;
			key = k;
			r = nr;
		}
	}
	if (fts__calib_put_loaded(c, put, key, newest, r) < 0)
		goto bad;
	{
		struct fts__end head = { .key = hk, .rec = hr, .grow = hg },
				tail = { .key = tk, .rec = tr, .grow = tg };
		if (fts__calib_publish_loaded(c, n, head, tail, newest) < 0)
			goto bad;
	}
	return c;
bad:
	rc = -EBADMSG;
fail:
	*err = -rc;
	fts_calib_free(c);
	return NULL;
}

struct fts_calib *fts__histfile_copy(const struct fts_calib *c)
{
	struct fts_calib *copy;
	struct payload *p;
	unsigned char *b;
	size_t len;
	int err;

	if (segs_payload(c, 0, &b, &len) < 0)
		return NULL;
	if ((p = malloc(sizeof(*p)))) {
		*p = (struct payload){ .fd = -1, .mem = b, .left = len };
		copy = load_segs(p, (uint32_t)len, &err);
	} else {
		copy = NULL;
	}
	free(p);
	free(b);
	return copy;
}

/* The file header, 16 bytes: its version (1 to 3) when whole and known, 0 when the
 * file ends inside it (or is empty) and what is there is a header's start, or
 * negative errno. */
static int read_file_header(int fd, unsigned char f[16])
{
	ssize_t got = fts__histfile_read_some(fd, f, 16);

	if (got < 0)
		return (int)got;
	for (uint32_t v = FTS__FILE_VERSION; v >= 1; v--) {
		unsigned char want[16] = { 0 };
		memcpy(want, FTS__FILE_MAGIC, 8);
		fts__le_put32(want + 8, v);
		if (!memcmp(f, want, (size_t)got))
			return got == 16 ? (int)v : 0;
	}
	return -EBADMSG;
}

/* What a load builds, and what it found so far. */
struct loading {
	unsigned want;                   /* the clocks to build, 1 << k */
	struct fts_calib *c[FTS__NCLK];
	uint32_t record;                 /* SAMPLES or CLKSAMPLES: the record's type, 0 */
	unsigned segs_seen;              /* the clocks whose saved history was read */
	int segs_last;                   /* the last of them, -1 */
};

/* Replay a SAMPLES or CLKSAMPLES payload of len bytes into the histories wanted (made at
 * the first). A sample a history does not take (out of order) stays out of it, as the
 * recording process left it out (it records every sample it took, whichever clocks'
 * histories took it); a SAMPLES sample CLOCK_REALTIME's does not take is damage, as
 * its recorder took only such samples. 0 or negative errno. */
static int load_samples(struct payload *p, uint32_t type, uint32_t len, struct loading *ld,
			struct fts__fileinfo *fi)
{
	size_t sz = type == FTS__BLK_CLKSAMPLES ? FTS__CLKSAMPLE_BYTES : FTS__SAMPLE_BYTES;
	unsigned build = ld->want & (type == FTS__BLK_CLKSAMPLES ? FTS__ALL_CLOCKS : 1u);
	int rc;

	for (int k = 0; k < FTS__NCLK; k++)
		if (build & 1u << k && !ld->c[k] && !(ld->c[k] = fts_calib_new()))
			return -ENOMEM;
	while (len) {
		size_t m = len < PIECE ? len : PIECE;
		if ((rc = take(p, m)) < 0)
			return rc;
		for (size_t i = 0; i < m; i += sz) {
			const unsigned char *s = p->piece + i;
			uint32_t steps = fts__le_get32(s + (sz == FTS__SAMPLE_BYTES ? 24 : 24 * FTS__NCLK));
			for (int k = 0; k < FTS__NCLK; k++) {
				const unsigned char *q = s + 24 * k;
				if (!(build & 1u << k) ||
				    fts__calib_add_sample(ld->c[k], fts__le_get64(q), (int64_t)fts__le_get64(q + 8),
							  fts__le_get64(q + 16), (steps >> k) & 1) == 0)
					continue;
				if (errno == ENOMEM)
					return -ENOMEM;
				if (type == FTS__BLK_SAMPLES)
					return -EBADMSG;
			}
			fi->samples++;
		}
		len -= (uint32_t)m;
	}
	return 0;
}

/* A SEGS or CLKSEGS payload of len bytes: the saved history of one clock, built if
 * wanted, else checked for its length and passed over. 0 or negative errno. */
static int load_saved(struct payload *p, uint32_t type, uint32_t len, struct loading *ld,
		      struct fts__fileinfo *fi, int *err)
{
	unsigned held = 1u << FTS__CLK_REALTIME;
	int k = FTS__CLK_REALTIME, rc;

	if (type == FTS__BLK_CLKSEGS) {
		/* rising clocks, each naming the same set, which holds CLOCK_REALTIME */
		if (fi->version < 3 || fi->plain || len < 8)
			return -EBADMSG;
		if ((rc = take(p, 8)) < 0)
			return rc;
		k = (int)(fts__le_get32(p->piece) < FTS__NCLK ? fts__le_get32(p->piece) : FTS__NCLK);
		held = fts__le_get32(p->piece + 4);
		len -= 8;
		if (k == FTS__NCLK || held & ~FTS__ALL_CLOCKS || !(held & 1u << k) ||
		    !(held & 1u << FTS__CLK_REALTIME) || k <= ld->segs_last ||
		    (fi->saved && held != fi->clocks))
			return -EBADMSG;
	} else if (fi->saved) {
		return -EBADMSG;   /* one SEGS block, alone */
	} else {
		fi->plain = 1;
	}
	fi->saved = 1;
	fi->clocks = held;
	ld->segs_seen |= 1u << k;
	ld->segs_last = k;
	if (len < SEGS_FIXED || (len - SEGS_FIXED) % SEG_BYTES)
		return -EBADMSG;
	if (k == FTS__CLK_REALTIME)
		fi->segments = (len - SEGS_FIXED) / SEG_BYTES;
	if (!(ld->want & 1u << k))
		return skip(p, len);
	if (!(ld->c[k] = load_segs(p, len, err)))
		return -*err;
	return 0;
}

/* One block's payload, of type and len, with pad bytes after it; its checksum
 * (crc, of the payload and padding; format 1: of the payload only) checked at its
 * end. 0 or negative errno. */
static int load_block(struct payload *p, uint32_t type, uint32_t len, uint32_t pad,
		      uint32_t crc, struct loading *ld, struct fts__fileinfo *fi, int *err)
{
	int rc = 0;
	uint32_t sum;

	switch (type) {
	case FTS__BLK_HEAD:
		if (len < HEAD_BYTES || fi->has_head)
			return -EBADMSG;
		if ((rc = take(p, HEAD_BYTES)) < 0)
			return rc;
		fi->has_head = 1;
		fi->head.kind = fts__le_get32(p->piece);
		fi->head.counter_hz = fts__le_get64(p->piece + 8);
		memcpy(fi->head.boot_id, p->piece + 16, 16);
		memcpy(fi->head.clocksource, p->piece + 32, 31);
		fi->head.created_ns = (int64_t)fts__le_get64(p->piece + 64);
		rc = skip(p, len - HEAD_BYTES);
		break;
	case FTS__BLK_SEGS:
	case FTS__BLK_CLKSEGS:
		if (!fi->has_head || ld->record)
			return -EBADMSG;
		rc = load_saved(p, type, len, ld, fi, err);
		break;
	case FTS__BLK_SAMPLES:
	case FTS__BLK_CLKSAMPLES:
		/* one kind of samples a record: a clock's history is fed by every sample */
		if (!fi->has_head || fi->saved || (ld->record && ld->record != type) ||
		    (type == FTS__BLK_CLKSAMPLES && fi->version < 3) ||
		    len % (type == FTS__BLK_CLKSAMPLES ? FTS__CLKSAMPLE_BYTES : FTS__SAMPLE_BYTES))
			return -EBADMSG;
		ld->record = type;
		fi->plain = type == FTS__BLK_SAMPLES;
		fi->clocks = fi->plain ? 1u << FTS__CLK_REALTIME : FTS__ALL_CLOCKS;
		rc = load_samples(p, type, len, ld, fi);
		break;
	case FTS__BLK_EVENT:
		if (!fi->has_head || len < FTS__EVENT_BYTES)
			return -EBADMSG;
		if ((rc = take(p, FTS__EVENT_BYTES)) < 0)
			return rc;
		{
			const unsigned char *b = p->piece;
			struct fts__event e = { .type = fts__le_get32(b), .counter = fts__le_get64(b + 8),
						.realtime_ns = (int64_t)fts__le_get64(b + 16),
						.value_ns = (int64_t)fts__le_get64(b + 24) };
			memcpy(e.what, b + 32, 63);
			if (e.type >= 1 && e.type <= 3) {
				if (!(fi->events[1] + fi->events[2] + fi->events[3]))
					fi->first_event = e;
				fi->events[e.type]++;
			}
		}
		rc = skip(p, len - FTS__EVENT_BYTES);
		break;
	default:
		if (!(type & FTS__BLK_OPTIONAL))
			return -EBADMSG;
		fi->blocks_skipped++;
		rc = skip(p, len);
	}
	if (rc < 0)
		return rc;
	sum = p->crc;
	if ((rc = take(p, pad)) < 0)
		return rc;
	for (uint32_t i = 0; i < pad; i++)
		if (p->piece[i])
			return -EBADMSG;
	if (fi->version >= 2)
		sum = p->crc;
	/* Checked in the fuzzer's build too: its mutator writes right checksums after
	 * most of its changes (tests/fuzz/fuzz_histfile.c). */
	if (sum != crc)
		return -EBADMSG;
	return 0;
}

int fts__histfile_load_clocks(int fd, unsigned want, struct fts_calib *out[FTS__NCLK],
			      struct fts__fileinfo *info)
{
	struct fts__fileinfo fi = { 0 };
	struct loading ld = { .want = want, .segs_last = -1 };
	unsigned char f[16], h[FTS__BLOCK_HEAD_BYTES], *b = NULL;
	struct payload *p = NULL;
	struct stat st;
	off_t start = -1, size = 0;
	size_t hlen;
	uint32_t seed;
	int rc, err;   /* load_segs's */

	for (int k = 0; k < FTS__NCLK; k++)
		out[k] = NULL;
	/* A regular file's length says which blocks it holds whole: those are read as
	 * they are used. Anything else (a pipe) is read a whole block at a time. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (start = lseek(fd, 0, SEEK_CUR)) >= 0)
		size = st.st_size;
	else
		start = -1;
	if ((rc = read_file_header(fd, f)) < 0)
		goto fail;
	if (rc == 0) {
		fi.cut = 1;   /* cut inside its header: a record before its HEAD */
		goto ends;
	}
	if (!(p = malloc(sizeof(*p)))) {
		rc = -ENOMEM;
		goto fail;
	}
	fi.version = (uint32_t)rc;
	/* Format 1: 16-byte block headers, a CRC of the payload only */
	hlen = fi.version == 1 ? 16 : FTS__BLOCK_HEAD_BYTES;
	seed = fts__crc32(0, f, sizeof(f));
	fi.whole = sizeof(f);
	for (;;) {
		uint32_t type, len, pad;
		ssize_t got;

		if ((got = fts__histfile_read_some(fd, h, hlen)) < 0) {
			rc = (int)got;
			goto fail;
		}
		if (got == 0)
			break;   /* the end of the file, between blocks */
		if (got < (ssize_t)hlen) {
			fi.cut = 1;   /* the end of the file inside a block's header */
			break;
		}
		/* A header whose CRC holds says what its writer wrote: a file that ends
		 * inside its payload was cut there, not damaged in its length. */
		if (fi.version >= 2 && (fts__crc32(seed, h, 20) != fts__le_get32(h + 20) || fts__le_get32(h + 16)))
			goto bad;
		seed = 0;
		if (fts__le_get32(h) != FTS__BLOCK_MAGIC)
			goto bad;
		type = fts__le_get32(h + 4);
		len = fts__le_get32(h + 8);
		pad = (8 - len % 8) % 8;
		if (len > MAX_BLOCK)
			goto bad;
		*p = (struct payload){ .fd = fd, .left = (size_t)len + pad };
		if (start >= 0) {
			uint64_t end = (uint64_t)start + fi.whole + hlen + len + pad;
			/* a file being recorded may have grown since */
			if (end > (uint64_t)size && fstat(fd, &st) == 0)
				size = st.st_size;
			if (end > (uint64_t)size)
				rc = -EBADMSG;
		} else {
			free(b);
			b = NULL;
			if ((rc = read_payload(fd, &b, len + pad)) == 0) {
				p->fd = -1;
				p->mem = b;
			}
		}
		/* a saved history is whole or nothing */
		if (rc == -EBADMSG && type != FTS__BLK_SEGS && type != FTS__BLK_CLKSEGS) {
			fi.cut = 1;   /* inside its payload: a record keeps its whole blocks */
			break;
		}
		if (rc < 0 || (rc = load_block(p, type, len, pad, fts__le_get32(h + 12), &ld, &fi, &err)) < 0)
			goto fail;
		fi.whole += hlen + len + pad;
	}
ends:
	/* A record only started (its header, whole or cut short), or stopped after one
	 * sample: no history yet, and not damage (a saved history always holds two
	 * knots: load_segs checked it). */
	if (!fi.saved && fi.samples < 2) {
		rc = -ENODATA;
		goto fail;
	}
	/* a saved history cut between its clocks' blocks */
	if (fi.saved && ld.segs_seen != fi.clocks)
		goto bad;
	for (int k = 0; k < FTS__NCLK; k++) {
		if (!ld.c[k] || fts_calib_count(ld.c[k]) >= 2)
			continue;
		if (k == FTS__CLK_REALTIME)
			goto bad;
		/* a clock whose history took fewer than two of the samples: none */
		fts_calib_free(ld.c[k]);
		ld.c[k] = NULL;
		fi.clocks &= ~(1u << k);
	}
	free(b);
	free(p);
	if (info)
		*info = fi;
	for (int k = 0; k < FTS__NCLK; k++)
		out[k] = ld.c[k];
	return 0;
bad:
	rc = -EBADMSG;
fail:
	if (info)
		*info = fi;   /* what was read before the failure */
	free(b);
	free(p);
	for (int k = 0; k < FTS__NCLK; k++)
		fts_calib_free(ld.c[k]);
	return rc;
}

struct fts_calib *fts__histfile_load(int fd, struct fts__fileinfo *info, int *err)
{
	struct fts_calib *c[FTS__NCLK];
	int rc = fts__histfile_load_clocks(fd, 1u << FTS__CLK_REALTIME, c, info);

	*err = rc < 0 ? -rc : 0;
	return rc < 0 ? NULL : c[FTS__CLK_REALTIME];
}

int fts__histfile_load_all_clocks(int fd, struct fts_calib *out[FTS__NCLK])
{
	return fts__histfile_load_clocks(fd, FTS__ALL_CLOCKS, out, NULL);
}

struct fts_calib *fts_calib_load(int fd)
{
	struct fts_calib *c;
	int err;

	if (fd < 0)
		return fts__fail_null(EINVAL);
	c = fts__histfile_load(fd, NULL, &err);
	return c ? c : fts__fail_null(err);
}
