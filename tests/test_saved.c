/* test_saved.c - a saved history (fts_calib_save, fts_calib_load), and what every
 * history file withstands: a saved history loads to the same conversions; a loaded one
 * takes no samples; every truncation and every flipped bit of a file is refused
 * (EBADMSG) and nothing crashes; lengths the file does not back are never allocated;
 * files of format 1 still load; a load streams. The helpers: files_util.h. */
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

static void save_and_load(void **state)
{
	struct daysim d;
	struct fts_calib *c = harsh_history(&d, 3000), *l;
	uint64_t o1, n1, o2, n2;
	int fd = memfd_create("fts-save", MFD_CLOEXEC);
	size_t bytes;
	(void)state;

	assert_int_equal(fts_calib_save(c, fd), 0);
	free(slurp(fd, &bytes));
	print_message("3000 harsh samples: %zu knots, a file of %zu bytes\n", fts_calib_count(c),
		      bytes);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	l = fts_calib_load(fd);
	assert_non_null(l);
	assert_int_equal(fts_calib_count(l), fts_calib_count(c));
	assert_int_equal(fts_calib_range(c, &o1, &n1), 0);
	assert_int_equal(fts_calib_range(l, &o2, &n2), 0);
	assert_int_equal(o1, o2);
	assert_int_equal(n1, n2);
	assert_same(c, l, o1, n1);
	/* a loaded history converts, and takes no samples */
	errno = 0;
	assert_int_equal(fts_calib_add(l, n1 + 100, 0, n1 + 100), -1);
	assert_int_equal(errno, EPERM);
	/* bad arguments */
	errno = 0;
	assert_int_equal(fts_calib_save(NULL, fd), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_calib_save(c, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(fts_calib_load(-1));
	assert_int_equal(errno, EINVAL);
	{
		struct fts_calib *e = fts_calib_new();
		errno = 0;
		assert_int_equal(fts_calib_save(e, fd), -1);
		assert_int_equal(errno, ENODATA);
		fts_calib_free(e);
	}
	close(fd);
	fts_calib_free(l);
	fts_calib_free(c);
	daysim_free(&d);
}

/* Every prefix of a file and every byte of it flipped: refused, never a crash. */
static void corrupt_files(void **state)
{
	struct daysim d;
	struct fts_calib *c = harsh_history(&d, 600);
	int fd = memfd_create("fts-corrupt", MFD_CLOEXEC);
	unsigned char *good;
	size_t n, refused = 0, tried = 0;
	(void)state;

	assert_int_equal(fts_calib_save(c, fd), 0);
	good = slurp(fd, &n);
	close(fd);
	for (size_t len = 0; len < n; len += len < 256 ? 1 : 37) {
		int f = mem_file(good, len);
		errno = 0;
		assert_null(fts_calib_load(f));
		/* cut before the SEGS block's payload: a file with no history yet; inside
		 * it: damaged (a saved history is whole or nothing) */
		assert_int_equal(errno, len < HEADER_BYTES + FTS__BLOCK_HEAD_BYTES ? ENODATA : EBADMSG);
		close(f);
	}
	for (size_t i = 0; i < n; i += i < 256 ? 1 : 29) {
		struct fts_calib *l;
		int f;
		good[i] ^= 0x5a;
		f = mem_file(good, n);
		errno = 0;
		l = fts_calib_load(f);
		tried++;
		if (!l) {
			assert_int_equal(errno, EBADMSG);
			refused++;
		}
		fts_calib_free(l);
		close(f);
		good[i] ^= 0x5a;
	}
	print_message("%zu bytes: every prefix refused; %zu of %zu flipped bytes refused\n", n,
		      refused, tried);
	assert_int_equal(refused, tried);   /* a checksum, or a check, for every byte */
	free(good);
	fts_calib_free(c);
	daysim_free(&d);
}

/* A block that claims a gigabyte in a file of a few bytes: refused without taking
 * the memory (the allocation limit would fail a gigabyte). With its header's CRC
 * right, the file was cut inside that block (a record before its HEAD: ENODATA);
 * with it wrong, the file is damaged. */
static void hostile_lengths(void **state)
{
	unsigned char f[16 + FTS__BLOCK_HEAD_BYTES + 8] = { 0 };
	struct rlimit was, lim;
	int fd;
	(void)state;

	memcpy(f, FTS__FILE_MAGIC, 8);
	f[8] = FTS__FILE_VERSION;
	memcpy(f + 16, "FBLK", 4);   /* FTS__BLOCK_MAGIC, little-endian */
	f[20] = FTS__BLK_HEAD;
	f[24 + 3] = 0x3f;            /* length 0x3f000000 */
	getrlimit(RLIMIT_AS, &was);
	lim = (struct rlimit){ 512u << 20, was.rlim_max };
	if (!FTS_TEST_SANITIZED)   /* the sanitizers reserve far more address space */
		setrlimit(RLIMIT_AS, &lim);
	for (int right = 0; right < 2; right++) {
		uint32_t crc = fts__crc32(fts__crc32(0, f, 16), f + 16, 20) + (uint32_t)!right;
		for (int i = 0; i < 4; i++)
			f[16 + 20 + i] = (unsigned char)(crc >> (8 * i));
		fd = mem_file(f, sizeof(f));
		errno = 0;
		assert_null(fts_calib_load(fd));
		assert_int_equal(errno, right ? ENODATA : EBADMSG);
		close(fd);
	}
	setrlimit(RLIMIT_AS, &was);
}

/* Every single-bit flip of a file: refused (EBADMSG), or a history that converts
 * every counter value exactly as the file's own (none does: every byte is under a
 * checksum, the file header under the first block's). Returns the flips refused. */
static size_t flip_every_bit(unsigned char *good, size_t n, const struct fts_calib *ref)
{
	uint64_t lo, hi;
	size_t refused = 0;

	assert_int_equal(fts_calib_range(ref, &lo, &hi), 0);
	for (size_t i = 0; i < n * 8; i++) {
		struct fts_calib *l;
		int f;
		good[i / 8] ^= (unsigned char)(1u << (i % 8));
		f = mem_file(good, n);
		errno = 0;
		l = fts_calib_load(f);
		close(f);
		good[i / 8] ^= (unsigned char)(1u << (i % 8));
		if (!l) {
			assert_int_equal(errno, EBADMSG);
			refused++;
			continue;
		}
		assert_same(ref, l, lo, hi);
		fts_calib_free(l);
	}
	return refused;
}

/* No single-bit flip changes a conversion without an error: a record of 1.5 s (its
 * blocks' types, lengths, checksums, padding, the file header), and a saved history. */
static void every_bit_flip(void **state)
{
	char path[] = "/tmp/fts-flip-XXXXXX";
	int fd = mkstemp(path);
	unsigned char *good;
	struct fts_calib *ref;
	size_t n, refused;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(46, 10);
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < 15; i++) {
		simc_advance(100e6L);
		assert_int_equal(fts__clock_sample(), 0);
		if (i % 5 == 4) {   /* three SAMPLES blocks, and an EVENT */
			assert_int_equal(fts_clock_record(NULL), 0);
			assert_int_equal(fts_clock_record(path), 0);
		}
		if (i == 7)
			simc_step(2e8L);
	}
	assert_int_equal(fts_clock_record(NULL), 0);
	good = file_bytes(path, &n);
	assert_non_null(good);
	fd = mem_file(good, n);
	ref = fts_calib_load(fd);
	close(fd);
	assert_non_null(ref);
	refused = flip_every_bit(good, n, ref);
	print_message("a record of %zu bytes: %zu of %zu single-bit flips refused\n", n, refused,
		      n * 8);
	assert_int_equal(refused, n * 8);
	fts_calib_free(ref);
	free(good);
	fts__clock_set_source(NULL);
	unlink(path);
	{
		struct daysim d;
		struct fts_calib *c = harsh_history(&d, 40);
		fd = memfd_create("fts-flip", MFD_CLOEXEC);
		assert_int_equal(fts_calib_save(c, fd), 0);
		good = slurp(fd, &n);
		close(fd);
		refused = flip_every_bit(good, n, c);
		print_message("a saved history of %zu bytes: %zu of %zu single-bit flips refused\n",
			      n, refused, n * 8);
		assert_int_equal(refused, n * 8);
		free(good);
		fts_calib_free(c);
		daysim_free(&d);
	}
}

/* Files of format 1 (16-byte block headers, the payload's CRC only), stored as that
 * version wrote them, still load: a record of daysim_ntp(40 samples, seed 5) in 4
 * SAMPLES blocks, and a saved history of daysim_harsh(60, seed 6). Each converts as
 * the history of the same samples. A recorder does not append to one. */
static void format1_loads(void **state)
{
	static const struct { const char *file; int harsh; size_t n; uint64_t seed; } f1[] = {
		{ FTS_TEST_DATA "/record-v1.fth", 0, 40, 5 },
		{ FTS_TEST_DATA "/saved-v1.fth", 1, 60, 6 },
	};
	(void)state;

	for (size_t k = 0; k < 2; k++) {
		struct daysim d;
		struct fts_calib *c = fts_calib_new(), *l;
		struct fts__fileinfo fi;
		uint64_t lo, hi;
		int fd = open(f1[k].file, O_RDONLY), err;

		assert_true(fd >= 0);
		assert_int_equal(f1[k].harsh ? daysim_harsh(&d, f1[k].n, f1[k].seed)
					     : daysim_ntp(&d, f1[k].n, f1[k].seed), 0);
		for (size_t i = 0; i < d.nsamp; i++)
			assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
		l = fts__histfile_load(fd, &fi, &err);
		close(fd);
		assert_non_null(l);
		assert_int_equal(fi.version, 1);
		assert_int_equal(fi.saved, f1[k].harsh);
		assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
		/* the stored files were written on x86_64, their samples simulated and their
		 * segments computed in its long double: exact only where this one is the same;
		 * a saved history keeps the answers of the rules it was made with, an earlier
		 * build's (rule 5's lag came later): they overlap the current ones */
		assert_answers(c, l, lo, hi, f1[k].harsh || LDBL_MANT_DIG != 64);
		fts_calib_free(l);
		fts_calib_free(c);
		daysim_free(&d);
	}
}

/* The memory a load takes beyond the history it gives: a record of 300000 harsh
 * samples (9.6 MB) in one block, and the saved history of it, each loaded in a child
 * whose peak resident size is measured against the history's size (its segments).
 * Loading streams (a piece of a block at a time): at most twice the history plus
 * 1 MB. */
static long rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void load_streams(void **state)
{
	struct daysim d;
	struct fts__head h = { .kind = FTS__KIND_OTHER };
	struct fts_calib *c;
	size_t n = 300000, len = n * FTS__SAMPLE_BYTES;
	unsigned char *b;
	int fr, fs;
	(void)state;

	if (FTS_TEST_SANITIZED)
		FTS_SKIP("the sanitizers' own memory would be counted");
	c = fts_calib_new();
	b = malloc(len);
	fr = memfd_create("fts-big-record", MFD_CLOEXEC);
	fs = memfd_create("fts-big-saved", MFD_CLOEXEC);
	assert_non_null(b);
	assert_int_equal(daysim_harsh(&d, n, 11), 0);
	for (size_t i = 0; i < d.nsamp; i++) {
		fts__histfile_put_sample(b + i * FTS__SAMPLE_BYTES, d.b[i], d.r[i], d.a[i], 0);
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
	}
	assert_int_equal(fts__histfile_write_header(fr, &h), 0);
	assert_int_equal(fts__histfile_write_block(fr, FTS__BLK_SAMPLES, b, (uint32_t)len), 0);
	assert_int_equal(fts_calib_save(c, fs), 0);
	free(b);
	daysim_free(&d);
	for (int k = 0; k < 2; k++) {
		int fd = k ? fs : fr, status, p[2];
		long got[3] = { 0 };
		pid_t pid;

		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rusage ru;
			long v[3];
			struct fts_calib *l;
			v[0] = rss_kb();
			l = fts_calib_load(fd);
			getrusage(RUSAGE_SELF, &ru);
			v[1] = ru.ru_maxrss - v[0];
			/* the history: its segments, 40 bytes each (a key, a line) */
			v[2] = l ? (long)(fts_calib_count(l) * 40 / 1024) : -1;
			_exit(write(p[1], v, sizeof(v)) == sizeof(v) ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(read(p[0], got, sizeof(got)), sizeof(got));
		close(p[0]);
		close(p[1]);
		print_message("%s of %ld kB: loading took %ld kB for a history of %ld kB\n",
			      k ? "saved history" : "record",
			      (long)(lseek(fd, 0, SEEK_END) / 1024), got[1], got[2]);
		assert_true(got[2] > 0);
		assert_true(got[1] <= 2 * got[2] + 1024);
	}
	close(fr);
	close(fs);
	fts_calib_free(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(save_and_load),
		cmocka_unit_test(corrupt_files),
		cmocka_unit_test(hostile_lengths),
		cmocka_unit_test(every_bit_flip),
		cmocka_unit_test(format1_loads),
		cmocka_unit_test(load_streams),
	};
	return fts_test_run(tests, argc, argv);
}
