/* test_clocks_file.c - every clock in history files (format 3): a record and a saved
 * history of every clock convert as the live process did; older files hold
 * CLOCK_REALTIME's alone; a file cut or corrupted anywhere is refused or whole. The
 * helpers: files_util.h. */
#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"
#include "faststamp.h"
#include "crc32.h"
#include "histfile.h"
#include "daysim.h"
#include "simclock.h"
#include "clock.h"
#include "files_util.h"

/* A record of every clock on a simulated machine, N stamps 1 ms apart, a sample every
 * 50: a wall-clock set (REALTIME and TAI step), a leap second (REALTIME alone), a sleep
 * with the counter stopped (REALTIME, TAI, BOOTTIME) and one it ran through (every
 * clock but MONOTONIC... each told as the sampler tells it): each clock's histories are
 * told of different steps, so the file must carry each clock's step flag. The stamps
 * and what each clock read at them in st and truth; the record at path, stopped; its
 * saved history (fts_clock_save) in *saved, a memfd at 0. */
enum { CLK_N = 1200 };
static void record_every_clock(char *path, fast_timestamp_t *st,
			       int64_t truth[FTS__NCLK][CLK_N], int *saved)
{
	int fd = mkstemp(path);   /* a fresh name: the record starts the file */

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(47, 30);
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < CLK_N; i++) {
		st[i] = simc_stamp(&truth[0][i]);
		for (int k = 1; k < FTS__NCLK; k++)
			truth[k][i] = simc_truth_of(k, simc.t);
		simc_advance(1e6L);
		if (i % 50 != 49)
			continue;
		assert_int_equal(fts__clock_sample(), 0);
		if (i == 299)
			simc_step(-3e8L);
		if (i == 599)
			simc_leap(1);
		if (i == 799)
			simc_suspend(2e9L);
		if (i == 999)
			simc_suspend_counting(1e9L);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	*saved = memfd_create("fts-clocks-saved", MFD_CLOEXEC);
	assert_int_equal(fts_clock_save(*saved), 0);
	assert_int_equal(lseek(*saved, 0, SEEK_SET), 0);
}

static void free_clocks(struct fts_calib *c[FTS__NCLK])
{
	for (int k = 0; k < FTS__NCLK; k++)
		fts_calib_free(c[k]);
}

/* A record and a saved file of the process clock give every clock's history as the
 * process had it: each converts every counter value (the stamps, and across and
 * around the history) to the same ns and bound as the live history, and every stamp
 * to what the live fts_convert_clock gave, within its bound of what that clock read. */
static void every_clock_as_live(void **state)
{
	char path[] = "/tmp/fts-clocks-XXXXXX";
	int fd, fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	struct fts_calib *rc[FTS__NCLK], *sv[FTS__NCLK];
	struct fts__fileinfo fi, fs_info;
	uint64_t taken;
	size_t bytes;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fts__histfile_load_clocks(fd, FTS__ALL_CLOCKS, rc, &fi), 0);
	bytes = (size_t)lseek(fd, 0, SEEK_END);
	close(fd);
	assert_int_equal(fts__histfile_load_clocks(fs, FTS__ALL_CLOCKS, sv, &fs_info), 0);
	assert_int_equal(fi.version, 3);
	assert_int_equal(fi.clocks, FTS__ALL_CLOCKS);
	assert_false(fi.saved);
	assert_int_equal(fs_info.clocks, FTS__ALL_CLOCKS);
	assert_true(fs_info.saved);
	print_message("a record of %" PRIu64 " samples of every clock: %zu bytes (%zu a sample); "
		      "its saved history %ld bytes\n", fi.samples, bytes,
		      (size_t)FTS__CLKSAMPLE_BYTES, (long)lseek(fs, 0, SEEK_END));
	taken = fts__clock_samples_taken();
	for (int k = 0; k < FTS__NCLK; k++) {
		const struct fts_calib *live = fts__clock_history(k);
		size_t covered = 0;
		uint64_t lo, hi;

		assert_non_null(rc[k]);
		assert_non_null(sv[k]);
		assert_int_equal(fts_calib_range(live, &lo, &hi), 0);
		assert_same(live, rc[k], lo, hi);
		assert_same(live, sv[k], lo, hi);
		for (int i = 0; i < CLK_N; i++) {
			int64_t ns, err, n1, e1, n2, e2;
			assert_int_equal(fts_convert_clock(&st[i], fts__hw_clk_id(k), &ns, &err), 0);
			assert_int_equal(fts_calib_convert(rc[k], st[i], &n1, &e1), 0);
			assert_int_equal(fts_calib_convert(sv[k], st[i], &n2, &e2), 0);
			assert_int_equal(n1, ns);
			assert_int_equal(e1, err);
			assert_int_equal(n2, ns);
			assert_int_equal(e2, err);
			covered += llabs(ns - truth[k][i]) <= err;
		}
		print_message("clock %d: %zu knots; %d stamps, %zu within their bound, the same ns "
			      "and bound from the record, the saved file and the live clock\n", k,
			      fts_calib_count(rc[k]), CLK_N, covered);
		assert_int_equal(covered, CLK_N);
	}
	/* the live conversions took no sample: the histories compared are those saved */
	assert_int_equal(fts__clock_samples_taken(), taken);
	/* fts_calib_load gives CLOCK_REALTIME's */
	{
		struct fts_calib *l;
		uint64_t lo, hi;
		assert_int_equal(lseek(fs, 0, SEEK_SET), 0);
		l = fts_calib_load(fs);
		assert_non_null(l);
		assert_int_equal(fts_calib_range(sv[0], &lo, &hi), 0);
		assert_same(sv[0], l, lo, hi);
		fts_calib_free(l);
	}
	free_clocks(rc);
	free_clocks(sv);
	close(fs);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Files of formats 1 and 2, and fts_calib_save's (one history of no named clock), hold
 * CLOCK_REALTIME's alone: it loads, every other clock is NULL, and the file says so. */
static void old_files_hold_realtime(void **state)
{
	static const char *const files[] = {
		FTS_TEST_DATA "/record-v1.fth", FTS_TEST_DATA "/saved-v1.fth",
		FTS_TEST_DATA "/../fuzz/corpus/fuzz_histfile/record-v2",
		FTS_TEST_DATA "/../fuzz/corpus/fuzz_histfile/saved-v2",
	};
	(void)state;

	for (size_t i = 0; i <= 4; i++) {
		struct fts_calib *c[FTS__NCLK], *l;
		struct fts__fileinfo fi;
		uint64_t lo, hi;
		int fd;

		if (i < 4) {
			fd = open(files[i], O_RDONLY);
		} else {
			struct daysim d;
			struct fts_calib *h = harsh_history(&d, 100);
			fd = memfd_create("fts-plain", MFD_CLOEXEC);
			assert_int_equal(fts_calib_save(h, fd), 0);
			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			fts_calib_free(h);
			daysim_free(&d);
		}
		assert_true(fd >= 0);
		assert_int_equal(fts__histfile_load_clocks(fd, FTS__ALL_CLOCKS, c, &fi), 0);
		assert_int_equal(fi.version, i < 2 ? 1 : i < 4 ? 2 : 3);
		assert_int_equal(fi.clocks, 1u << FTS__CLK_REALTIME);
		assert_true(fi.plain);
		assert_non_null(c[FTS__CLK_REALTIME]);
		for (int k = 1; k < FTS__NCLK; k++)
			assert_null(c[k]);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		l = fts_calib_load(fd);
		assert_non_null(l);
		assert_int_equal(fts_calib_range(l, &lo, &hi), 0);
		assert_same(l, c[FTS__CLK_REALTIME], lo, hi);
		fts_calib_free(l);
		free_clocks(c);
		close(fd);
	}
}

/* A record of every clock cut at any byte loads every clock with the whole blocks before
 * the cut, as the file cut at the last one's end; a saved file of every clock cut
 * anywhere (inside a clock's block, or between two) is refused. */
static void every_clock_cut_anywhere(void **state)
{
	char path[] = "/tmp/fts-clkcut-XXXXXX";
	int fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	size_t ends[256], samples[256], nblocks, n, loaded = 0;
	unsigned char *f;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	f = file_bytes(path, &n);
	assert_non_null(f);
	nblocks = block_ends(f, n, ends, samples, 256);
	assert_true(nblocks > 2);
	assert_int_equal(ends[nblocks - 1], n);
	for (size_t len = 0; len <= n; len++) {
		struct fts_calib *c[FTS__NCLK], *ref[FTS__NCLK];
		struct fts__fileinfo fi;
		size_t k = 0, whole = 16;
		int fc, rc;

		while (k < nblocks && ends[k] <= len)
			whole = ends[k++];
		fc = len % 5 ? mem_file(f, len) : pipe_file(f, len);
		rc = fts__histfile_load_clocks(fc, FTS__ALL_CLOCKS, c, &fi);
		close(fc);
		if (k == 0 || samples[k - 1] < 2) {
			assert_int_equal(rc, -ENODATA);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(fi.cut, len != whole);
		loaded++;
		if (len % 11 == 0 || len == whole) {
			fc = mem_file(f, whole);
			assert_int_equal(fts__histfile_load_clocks(fc, FTS__ALL_CLOCKS, ref, NULL), 0);
			close(fc);
			for (int j = 0; j < FTS__NCLK; j++) {
				uint64_t lo, hi;
				assert_non_null(c[j]);
				assert_int_equal(fts_calib_range(ref[j], &lo, &hi), 0);
				assert_same(ref[j], c[j], lo, hi);
			}
			free_clocks(ref);
		}
		free_clocks(c);
	}
	print_message("a record of every clock, %zu bytes in %zu blocks: every cut loaded with its "
		      "whole blocks (%zu with a history)\n", n, nblocks, loaded);
	free(f);
	/* the saved file: every prefix refused, no history before a clock's block starts */
	f = slurp(fs, &n);
	close(fs);
	for (size_t len = 0; len < n; len++) {
		struct fts_calib *c[FTS__NCLK];
		int fc = len % 3 ? mem_file(f, len) : pipe_file(f, len);
		int rc = fts__histfile_load_clocks(fc, FTS__ALL_CLOCKS, c, NULL);
		close(fc);
		assert_int_equal(rc, len < HEADER_BYTES + FTS__BLOCK_HEAD_BYTES ? -ENODATA : -EBADMSG);
	}
	free(f);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Each block's checksums written again (format 2 and later): a change that a writer
 * could have made. */
static void rewrite_crcs(unsigned char *f, size_t n)
{
	size_t at = 16;

	while (at + FTS__BLOCK_HEAD_BYTES <= n) {
		uint32_t len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16 |
			       (uint32_t)f[at + 11] << 24;
		size_t padded = len + (8 - len % 8) % 8;
		uint32_t crc = fts__crc32(0, f + at + FTS__BLOCK_HEAD_BYTES, padded);
		for (int i = 0; i < 4; i++)
			f[at + 12 + i] = (unsigned char)(crc >> (8 * i));
		crc = fts__crc32(at == 16 ? fts__crc32(0, f, 16) : 0, f + at, 20);
		for (int i = 0; i < 4; i++)
			f[at + 20 + i] = (unsigned char)(crc >> (8 * i));
		at += FTS__BLOCK_HEAD_BYTES + padded;
	}
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Loading every clock of f[0..n): 0 or the negative errno. */
static int load_all(const unsigned char *f, size_t n)
{
	struct fts_calib *c[FTS__NCLK];
	int fd = mem_file(f, n), rc = fts__histfile_load_clocks(fd, FTS__ALL_CLOCKS, c, NULL);

	close(fd);
	if (rc == 0)
		free_clocks(c);
	return rc;
}

/* Every byte of every clock's data, changed, is refused: in a record's samples (each
 * clock's bracket and reading, the step flags) and in a saved file's blocks (the clock,
 * the set of clocks, the segments). So is per-clock data that breaks the format's rules
 * with its checksums right: a saved file's clocks out of order, repeated, unknown, not
 * naming the same set or one without CLOCK_REALTIME; samples of every clock in a file of
 * format 2, or beside samples of one. */
static void every_clock_corrupt(void **state)
{
	char path[] = "/tmp/fts-clkbad-XXXXXX";
	int fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	unsigned char *f, *g;
	size_t n, m, tried = 0, at;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	f = file_bytes(path, &n);
	g = slurp(fs, &m);
	close(fs);
	assert_int_equal(load_all(f, n), 0);
	assert_int_equal(load_all(g, m), 0);
	/* the record's first SAMPLES block of every clock: each byte of its samples */
	for (at = 16; at < n;) {
		uint32_t type = f[at + 4], len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16;
		if (type == FTS__BLK_CLKSAMPLES) {
			for (size_t i = 0; i < len; i++) {
				f[at + FTS__BLOCK_HEAD_BYTES + i] ^= 0x21;
				assert_int_equal(load_all(f, n), -EBADMSG);
				f[at + FTS__BLOCK_HEAD_BYTES + i] ^= 0x21;
				tried++;
			}
			break;
		}
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	assert_true(at < n);
	/* every byte of the saved file after its HEAD block */
	for (size_t i = HEADER_BYTES; i < m; i++, tried++) {
		g[i] ^= 0x21;
		assert_int_equal(load_all(g, m), -EBADMSG);
		g[i] ^= 0x21;
	}
	print_message("%zu bytes of every clock's data changed: each refused\n", tried);
	/* the rules, checksums right: the saved file's blocks (clock at +24, set at +28) */
	{
		size_t blk[FTS__NCLK], nb = 0;
		unsigned char *h = malloc(m);
		assert_non_null(h);
		for (at = HEADER_BYTES; at < m && nb < FTS__NCLK;) {
			uint32_t len = g[at + 8] | g[at + 9] << 8 | (uint32_t)g[at + 10] << 16;
			assert_int_equal(g[at + 4], FTS__BLK_CLKSEGS);
			blk[nb++] = at;
			at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		}
		assert_int_equal(nb, FTS__NCLK);
		assert_int_equal(at, m);
		static const struct { int blk, off; uint32_t v; } bad[] = {
			{ 1, 24, 0 },                         /* REALTIME's twice */
			{ 1, 24, 3 },                         /* out of order */
			{ 4, 24, FTS__NCLK },                 /* no such clock */
			{ 2, 28, FTS__ALL_CLOCKS & ~2u },     /* another set */
			{ 0, 28, FTS__ALL_CLOCKS << 1 },      /* a set naming no such clock */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(h, g, m);
			put_le32(h + blk[bad[i].blk] + bad[i].off, bad[i].v);
			rewrite_crcs(h, m);
			assert_int_equal(load_all(h, m), -EBADMSG);
		}
		/* the set without REALTIME, in every block, REALTIME's block gone: a saved
		 * file of the other clocks alone */
		{
			size_t first = blk[1];
			memcpy(h, g, HEADER_BYTES);
			memcpy(h + HEADER_BYTES, g + first, m - first);
			for (int b = 1; b < FTS__NCLK; b++)
				put_le32(h + blk[b] - (first - HEADER_BYTES) + 28, FTS__ALL_CLOCKS & ~1u);
			rewrite_crcs(h, m - (first - HEADER_BYTES));
			assert_int_equal(load_all(h, m - (first - HEADER_BYTES)), -EBADMSG);
		}
		/* as written, with its CRCs written again: loads (the rewriting is right) */
		memcpy(h, g, m);
		rewrite_crcs(h, m);
		assert_int_equal(load_all(h, m), 0);
		free(h);
	}
	/* a record of every clock: as format 2, and with a SAMPLES block before its samples */
	{
		unsigned char *h = malloc(n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		assert_non_null(h);
		memcpy(h, f, n);
		h[8] = 2;
		rewrite_crcs(h, n);
		assert_int_equal(load_all(h, n), -EBADMSG);
		memcpy(h, f, HEADER_BYTES);
		memset(h + HEADER_BYTES, 0, FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		memcpy(h + HEADER_BYTES, "FBLK", 4);
		h[HEADER_BYTES + 4] = FTS__BLK_SAMPLES;
		h[HEADER_BYTES + 8] = FTS__SAMPLE_BYTES;
		fts__histfile_put_sample(h + HEADER_BYTES + FTS__BLOCK_HEAD_BYTES, 1, 1, 2, 0);
		memcpy(h + HEADER_BYTES + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES, f + HEADER_BYTES,
		       n - HEADER_BYTES);
		rewrite_crcs(h, n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		assert_int_equal(load_all(h, n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES), -EBADMSG);
		free(h);
	}
	free(f);
	free(g);
	fts__clock_set_source(NULL);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_clock_as_live),
		cmocka_unit_test(old_files_hold_realtime),
		cmocka_unit_test(every_clock_cut_anywhere),
		cmocka_unit_test(every_clock_corrupt),
	};
	return fts_test_run(tests, argc, argv);
}
