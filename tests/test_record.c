/* test_record.c - the process clock's record file (fts_clock_record): it converts
 * every stamp stored while recording, within its clock_gettime bracket; the record's
 * rules (EEXIST, EBUSY, append); one recorder a file, across processes; a failed start
 * leaves nothing behind; a symbolic link at the path is refused, not followed; a record
 * cut anywhere loads what it holds. The helpers: files_util.h. */
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

/* The process clock's record, on a simulated machine: every stamp taken while
 * recording converts from the file alone, within its bound. */
static void record_converts_stamps(void **state)
{
	char path[] = "/tmp/fts-record-XXXXXX";
	int fd = mkstemp(path);
	fast_timestamp_t st[3000];
	int64_t truth[3000];
	struct fts_calib *l;
	size_t covered = 0;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(40, 25);
	assert_int_equal(fts_clock_record(path), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(path), -1);   /* already recording */
	assert_int_equal(errno, EBUSY);
	for (int i = 0; i < 3000; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(1e6L);
		if (i % 100 == 99) {
			assert_int_equal(fts__clock_sample(), 0);
			if (i == 1499)
				simc_step(-1e9L);   /* a step, announced by the sampler */
		}
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	for (int i = 0; i < 3000; i++) {
		int64_t ns, err;
		assert_int_equal(fts_calib_convert(l, st[i], &ns, &err), 0);
		covered += llabs(ns - truth[i]) <= err;
	}
	print_message("3000 stamps over 3 s, a step in the middle: %zu converted within their "
		      "bound from the record\n", covered);
	assert_int_equal(covered, 3000);
	/* the same boot and counter: recording again appends */
	assert_int_equal(fts_clock_record(path), 0);
	simc_advance(100e6L);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fts_calib_free(l);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Do stamps use a counter (not the generic backend, by build or by choice)? */
static int counter_in_use(void)
{
	struct fts_info in = { .size = sizeof(in) };
	assert_int_equal(fts_get_info(&in), 0);
	return strcmp(in.backend, "generic") != 0;
}

/* A file that is not a record of this boot and counter is left alone; without a
 * counter (the generic backend) nothing is recorded and no file is created. */
static void record_refuses_other_files(void **state)
{
	char path[] = "/tmp/fts-other-XXXXXX";
	int fd = mkstemp(path);
	struct stat before, after;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious\n", 9), 9);
	close(fd);
	assert_int_equal(stat(path, &before), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(path), -1);
	/* without a counter there is nothing to record, whatever the file */
	assert_int_equal(errno, counter_in_use() ? EEXIST : ENOTSUP);
	/* not even its times change: nothing was written to it */
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	assert_int_equal(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
	assert_int_equal(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
	fd = open(path, O_RDONLY);
	{
		char b[16] = { 0 };
		assert_int_equal(read(fd, b, sizeof(b)), 9);
		assert_string_equal(b, "precious\n");
	}
	close(fd);
	unlink(path);
	errno = 0;
	assert_int_equal(fts_clock_record("/nonexistent-dir/x"), -1);
	assert_int_equal(errno, counter_in_use() ? ENOENT : ENOTSUP);
	if (!counter_in_use()) {
		struct stat sb;
		errno = 0;
		assert_int_equal(fts_clock_record(path), -1);
		assert_int_equal(errno, ENOTSUP);
		assert_int_equal(stat(path, &sb), -1);   /* no file is created */
	}
}

/* A symbolic link at the path is refused (ELOOP), never followed: one another user
 * left in /tmp would have a root process record into a file of root's. The file it
 * names, empty (a record would start in it) or missing (one would be created there),
 * is left as it was, and so is the link. */
static void record_refuses_symlinks(void **state)
{
	char dir[] = "/tmp/fts-link-XXXXXX", target[64], link[64];
	struct stat st;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/roots-file", dir);
	snprintf(link, sizeof(link), "%s/record", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(target, link), 0);
	for (int dangling = 0; dangling < 2; dangling++) {
		errno = 0;
		assert_int_equal(fts_clock_record(link), -1);
		assert_int_equal(errno, counter_in_use() ? ELOOP : ENOTSUP);
		if (dangling) {
			assert_int_equal(stat(target, &st), -1);   /* not created */
		} else {
			assert_int_equal(stat(target, &st), 0);
			assert_int_equal(st.st_size, 0);           /* not written */
			unlink(target);
		}
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	unlink(link);
	rmdir(dir);
}

/* In a child: try to record path while the parent records it. 0 when refused with
 * EBUSY, else what went wrong (the child's exit status). First it samples and stops
 * recording: the parent's record, inherited open, must get nothing from it. */
static int child_tries(const char *path)
{
	simc_advance(50e6L);
	if (fts__clock_sample() < 0 || fts_clock_record(NULL) < 0)
		return 3;
	errno = 0;
	if (fts_clock_record(path) == 0)
		return 1;
	return errno == EBUSY ? 0 : 2;
}

/* Stamps taken while recording, converted from the file alone, each within its bound. */
static size_t covered_by(const char *path, const fast_timestamp_t *st, const int64_t *truth,
			 size_t n)
{
	int fd = open(path, O_RDONLY);
	struct fts_calib *l;
	size_t covered = 0;

	assert_true(fd >= 0);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	for (size_t i = 0; i < n; i++) {
		int64_t ns, err;
		if (fts_calib_convert(l, st[i], &ns, &err) == 0)
			covered += llabs(ns - truth[i]) <= err;
	}
	fts_calib_free(l);
	return covered;
}

/* Two processes, one file: whichever records first keeps it. The second's
 * fts_clock_record fails with EBUSY and leaves every byte as it was; the first's record
 * stays whole and converts every stamp it was taken for. */
static void two_recorders(void **state)
{
	char path[] = "/tmp/fts-two-XXXXXX";
	int fd = mkstemp(path), go[2], done[2], status;
	fast_timestamp_t st[400];
	int64_t truth[400];
	unsigned char *before, *after;
	size_t nb, na;
	pid_t pid;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(41, 10);
	/* the parent records; a child (another process, the same open file inherited)
	 * tries the same path */
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < 200; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(5e6L);
		if (i % 20 == 19)
			assert_int_equal(fts__clock_sample(), 0);
	}
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(fts_clock_record(path), 0);   /* appends, holds the lock again */
	before = file_bytes(path, &nb);
	assert_non_null(before);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_tries(path));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	after = file_bytes(path, &na);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	free(after);
	free(before);
	for (int i = 200; i < 400; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(5e6L);
		if (i % 20 == 19)
			assert_int_equal(fts__clock_sample(), 0);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(covered_by(path, st, truth, 400), 400);

	/* the other way round: a child records, the parent is refused until it stops */
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c = 0;
		int rc = fts_clock_record(path) == 0 ? 0 : 3;
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			rc = 4;
		if (!rc && (fts__clock_sample() < 0 || fts_clock_record(NULL) < 0))
			rc = 5;
		_exit(rc);
	}
	{
		char c;
		assert_int_equal(read(go[0], &c, 1), 1);
		before = file_bytes(path, &nb);
		errno = 0;
		assert_int_equal(fts_clock_record(path), -1);
		assert_int_equal(errno, EBUSY);
		after = file_bytes(path, &na);
		assert_int_equal(na, nb);
		assert_memory_equal(after, before, nb);
		free(after);
		free(before);
		assert_int_equal(write(done[1], &c, 1), 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the child stopped: its lock went with it, and the record is whole */
	assert_int_equal(covered_by(path, st, truth, 400), 400);
	assert_int_equal(fts_clock_record(path), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* A call that fails leaves nothing behind: no file it created, and a file it found
 * as it was. */
static void failed_record_leaves_nothing(void **state)
{
	char a[] = "/tmp/fts-a-XXXXXX", b[] = "/tmp/fts-b-XXXXXX";
	int fa = mkstemp(a), fb = mkstemp(b);
	struct stat sb;
	(void)state;

	assert_true(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	unlink(a);
	unlink(b);
	simc_use(42, 10);
	/* EBUSY while another file is recorded: B is not created */
	assert_int_equal(fts_clock_record(a), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(stat(b, &sb), -1);
	assert_int_equal(errno, ENOENT);
	/* and before B is looked at: a B that holds something else is not even read */
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0644);
	assert_int_equal(write(fb, "precious\n", 9), 9);
	close(fb);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EBUSY);
	unlink(b);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	/* B then records: nothing of the failed call is in its way */
	assert_int_equal(fts_clock_record(b), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	unlink(b);
	/* a start that fails once the file is open (the clock cannot be read): the file it
	 * created is removed, an empty file it found stays empty */
	simc_use(43, 10);
	simc.fail = 1;
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(stat(b, &sb), -1);
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0644);
	assert_true(fb >= 0);
	close(fb);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	/* and with the clock back, it records */
	simc.fail = 0;
	assert_int_equal(fts_clock_record(b), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_true(sb.st_size > 0);
	fts__clock_set_source(NULL);
	unlink(a);
	unlink(b);
}

/* A record with no history yet, header only or one sample (a recorder stopped at
 * once, or killed), says so: ENODATA, "fewer than two samples", not damage. Two
 * samples load. And a recorder goes on with such a file. */
static void too_few_samples(void **state)
{
	struct fts__head h = { .kind = FTS__KIND_OTHER };
	unsigned char s[2 * FTS__SAMPLE_BYTES];
	int fd = memfd_create("fts-few", MFD_CLOEXEC);
	struct fts_calib *c;
	(void)state;

	assert_int_equal(fts__histfile_write_header(fd, &h), 0);
	for (int n = 0; n <= 2; n++) {
		if (n) {
			fts__histfile_put_sample(s, 1000u * (unsigned)n, 1000000 * n, 1000u * (unsigned)n + 10, 0);
			assert_int_equal(fts__histfile_write_block(fd, FTS__BLK_SAMPLES, s, FTS__SAMPLE_BYTES), 0);
		}
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		errno = 0;
		c = fts_calib_load(fd);
		if (n < 2) {
			assert_null(c);
			assert_int_equal(errno, ENODATA);
		} else {
			assert_non_null(c);
			fts_calib_free(c);
		}
		assert_true(lseek(fd, 0, SEEK_END) > 0);
	}
	close(fd);
}

/* The process clock goes on with a record of its own boot and counter that holds its
 * header only (its recorder was killed at once). */
static void record_appends_to_header_only(void **state)
{
	char path[] = "/tmp/fts-one-XXXXXX";
	int fd = mkstemp(path);
	struct fts_calib *l;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(44, 10);
	assert_int_equal(fts_clock_record(path), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	/* keep the header only */
	{
		size_t n;
		unsigned char *b = file_bytes(path, &n);
		assert_non_null(b);
		assert_true(n > HEADER_BYTES + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		free(b);
		assert_int_equal(truncate(path, HEADER_BYTES), 0);
	}
	fd = open(path, O_RDONLY);
	errno = 0;
	assert_null(fts_calib_load(fd));
	assert_int_equal(errno, ENODATA);
	close(fd);
	assert_int_equal(fts_clock_record(path), 0);   /* not EEXIST: it is a record */
	simc_advance(200e6L);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fd = open(path, O_RDONLY);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	fts_calib_free(l);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* A record cut short at any byte (a crash, a full disk, ulimit -f) loads with every
 * whole block before the cut: exactly as the file cut at the end of its last whole
 * block, with every stamp inside converting within its bound; fewer than two samples
 * left: ENODATA. And recording goes on from the last whole block. */
static void record_cut_anywhere(void **state)
{
	char path[] = "/tmp/fts-cut-XXXXXX";
	int fd = mkstemp(path);
	enum { N = 400 };
	fast_timestamp_t st[N];
	int64_t truth[N];
	size_t ends[256], samples[256], nblocks, n, loaded = 0, nodata = 0;
	unsigned char *f;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(45, 10);
	/* 4 s: a sample every 100 ms, a new block every 0.3 s (recording stopped and
	 * started again), a step in the middle (an EVENT block) */
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < N; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(10e6L);
		if (i % 10 == 9)
			assert_int_equal(fts__clock_sample(), 0);
		if (i % 30 == 29) {
			assert_int_equal(fts_clock_record(NULL), 0);
			assert_int_equal(fts_clock_record(path), 0);
		}
		if (i == 200)
			simc_step(5e8L);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	f = file_bytes(path, &n);
	assert_non_null(f);
	nblocks = block_ends(f, n, ends, samples, 256);
	assert_int_equal(ends[nblocks - 1], n);
	print_message("a record of %zu bytes, %zu blocks, %zu samples\n", n, nblocks,
		      samples[nblocks - 1]);
	for (size_t len = 0; len <= n; len++) {
		size_t k = 0, whole = 16;
		struct fts_calib *c, *ref;
		int fc, fr;

		while (k < nblocks && ends[k] <= len)
			whole = ends[k++];
		/* from a pipe, a block is read whole before it is used: the same */
		fc = len % 5 ? mem_file(f, len) : pipe_file(f, len);
		errno = 0;
		c = fts_calib_load(fc);
		close(fc);
		if (k == 0 || samples[k - 1] < 2) {
			assert_null(c);
			assert_int_equal(errno, ENODATA);
			nodata++;
			continue;
		}
		assert_non_null(c);
		loaded++;
		if (len != whole && len != n)
			fts_calib_free(c), c = NULL;
		if (len == whole) {
			/* the file cut at a block's end: every stamp inside converts within its
			 * bound */
			uint64_t lo, hi;
			assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
			for (int i = 0; i < N; i++) {
				int64_t ns, err;
				if (st[i] < lo || st[i] > hi)
					continue;
				assert_int_equal(fts_calib_convert(c, st[i], &ns, &err), 0);
				assert_true(llabs(ns - truth[i]) <= err);
			}
			fts_calib_free(c);
			continue;
		}
		/* cut inside a block: the same history as the file cut at its last whole
		 * block (checked for every cut of the first few blocks, then one in 7) */
		if (k > 4 && len % 7)
			continue;
		fc = len % 2 ? mem_file(f, len) : pipe_file(f, len);
		c = fts_calib_load(fc);
		close(fc);
		fr = mem_file(f, whole);
		ref = fts_calib_load(fr);
		close(fr);
		assert_non_null(c);
		assert_non_null(ref);
		{
			uint64_t lo, hi;
			assert_int_equal(fts_calib_range(ref, &lo, &hi), 0);
			assert_same(c, ref, lo, hi);
		}
		fts_calib_free(ref);
		fts_calib_free(c);
	}
	print_message("every cut of it: %zu loaded with their whole blocks, %zu with fewer "
		      "than 2 samples (ENODATA)\n", loaded, nodata);
	/* recording goes on after a cut inside a block: from the last whole one */
	{
		size_t cut = ends[nblocks - 2] + 20, m;
		unsigned char *g;
		assert_int_equal(truncate(path, (off_t)cut), 0);
		assert_int_equal(fts_clock_record(path), 0);
		simc_advance(300e6L);
		assert_int_equal(fts__clock_sample(), 0);
		assert_int_equal(fts_clock_record(NULL), 0);
		g = file_bytes(path, &m);
		assert_non_null(g);
		assert_memory_equal(g, f, ends[nblocks - 2]);   /* what was whole stays */
		fd = mem_file(g, m);
		errno = 0;
		{
			struct fts__fileinfo fi;
			int err;
			struct fts_calib *c = fts__histfile_load(fd, &fi, &err);
			assert_non_null(c);
			assert_false(fi.cut);
			assert_int_equal(fi.whole, m);
			assert_true(fi.samples > samples[nblocks - 2]);
			fts_calib_free(c);
		}
		close(fd);
		free(g);
	}
	free(f);
	fts__clock_set_source(NULL);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_converts_stamps),
		cmocka_unit_test(record_refuses_other_files),
		cmocka_unit_test(record_refuses_symlinks),
		cmocka_unit_test(two_recorders),
		cmocka_unit_test(failed_record_leaves_nothing),
		cmocka_unit_test(too_few_samples),
		cmocka_unit_test(record_appends_to_header_only),
		cmocka_unit_test(record_cut_anywhere),
	};
	return fts_test_run(tests, argc, argv);
}
