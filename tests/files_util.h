/* files_util.h - what the history file tests share (test_saved.c, test_record.c,
 * test_clocks_file.c): files in memory and from pipes, a file's bytes and its blocks,
 * a history to save, and two histories' answers compared. Static inline: each test
 * program takes what it uses. Include after cmocka.h. */
#ifndef FTS_FILES_UTIL_H
#define FTS_FILES_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "faststamp.h"
#include "histfile.h"
#include "daysim.h"

/* A file's header and its HEAD block: what a record holds before its first sample. */
#define HEADER_BYTES (16 + FTS__BLOCK_HEAD_BYTES + 80)

/* A file in memory (memfd) holding bytes p[0..n). */
static inline int mem_file(const void *p, size_t n)
{
	int fd = memfd_create("fts-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* A pipe whose read end gives bytes p[0..n) (n within the pipe's buffer), then ends:
 * a file whose length the reader cannot know. */
static inline int pipe_file(const void *p, size_t n)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_true(n <= 65536);
	assert_int_equal(write(fds[1], p, n), (ssize_t)n);
	close(fds[1]);
	return fds[0];
}

/* The bytes of fd, from 0; *n their count. */
static inline unsigned char *slurp(int fd, size_t *n)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *b = malloc((size_t)end + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)end, 0), end);
	*n = (size_t)end;
	return b;
}

static inline struct fts_calib *harsh_history(struct daysim *d, size_t n)
{
	struct fts_calib *c = fts_calib_new();
	assert_int_equal(daysim_harsh(d, n, 9), 0);
	for (size_t i = 0; i < d->nsamp; i++)
		assert_int_equal(fts_calib_add(c, d->b[i], d->r[i], d->a[i]), 0);
	return c;
}

/* The same answers from two histories, at counters across and around them; with
 * close, answers that agree within their bounds (histories built on machines whose
 * long double differs: a saved file's segments against ones computed here). */
static inline void assert_answers(const struct fts_calib *a, const struct fts_calib *b, uint64_t from,
			   uint64_t to, int close)
{
	uint64_t xs[] = { 0, 1, from - 1, from, to, to + 1, UINT64_MAX };
	for (int i = 0; i < 4000 + 7; i++) {
		uint64_t x = i < 7 ? xs[i] : from + (to - from) / 4000 * (uint64_t)(i - 7);
		int64_t n1 = 1, e1 = 2, n2 = 3, e2 = 4;
		int r1 = fts_calib_convert(a, x, &n1, &e1), er1 = errno;
		int r2 = fts_calib_convert(b, x, &n2, &e2), er2 = errno;
		assert_int_equal(r1, r2);
		if (r1 == 0 && close) {
			assert_true((n1 > n2 ? (uint64_t)n1 - (uint64_t)n2 : (uint64_t)n2 - (uint64_t)n1) <=
				    (uint64_t)e1 + (uint64_t)e2);
		} else if (r1 == 0) {
			assert_int_equal(n1, n2);
			assert_int_equal(e1, e2);
		} else {
			assert_int_equal(er1, er2);
		}
	}
}

static inline void assert_same(const struct fts_calib *a, const struct fts_calib *b, uint64_t from,
			uint64_t to)
{
	assert_answers(a, b, from, to, 0);
}

/* The bytes of the file at path (NULL if there is none); *n their count. */
static inline unsigned char *file_bytes(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	unsigned char *b;

	*n = 0;   /* also when there is none */
	if (fd < 0)
		return NULL;
	b = slurp(fd, n);
	close(fd);
	return b;
}

/* The whole blocks of a history file: their ends (offsets) in ends[], and the samples
 * up to each; the count. */
static inline size_t block_ends(const unsigned char *f, size_t n, size_t *ends, size_t *samples, size_t max)
{
	size_t at = 16, k = 0, ns = 0;

	while (at + FTS__BLOCK_HEAD_BYTES <= n && k < max) {
		uint32_t type = f[at + 4] | f[at + 5] << 8 | (uint32_t)f[at + 6] << 16 | (uint32_t)f[at + 7] << 24;
		uint32_t len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16 | (uint32_t)f[at + 11] << 24;
		size_t end = at + FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		if (end > n)
			break;
		if (type == FTS__BLK_SAMPLES)
			ns += len / FTS__SAMPLE_BYTES;
		if (type == FTS__BLK_CLKSAMPLES)
			ns += len / FTS__CLKSAMPLE_BYTES;
		ends[k] = end;
		samples[k++] = ns;
		at = end;
	}
	return k;
}

#endif /* FTS_FILES_UTIL_H */
