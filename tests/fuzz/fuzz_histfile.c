/* fuzz_histfile.c - libFuzzer target for history files (fts_calib_load): the input is
 * a file. A file is either refused (EBADMSG, or ENOMEM/EIO) or gives a history that
 * holds two knots at least, converts without crashing (ERANGE the only failure inside
 * its range), takes samples only if it is a record (EPERM otherwise), and saves to a
 * file that loads to the same conversions. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "faststamp.h"
#include "fuzz.h"


static int file_of(const void *p, size_t n)
{
	int fd = memfd_create("fuzz-histfile", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, p, n) == (ssize_t)n);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = file_of(data, size), fd2;
	struct fts_calib *c, *c2;
	uint64_t o, n;

	errno = 0;
	c = fts_calib_load(fd);
	close(fd);
	if (!c) {
		CHECK(errno == EBADMSG || errno == ENOMEM || errno == EIO);
		return 0;
	}
	CHECK(fts_calib_count(c) >= 2);
	CHECK(fts_calib_range(c, &o, &n) == 0 && o <= n);
	fd2 = memfd_create("fuzz-histfile-2", MFD_CLOEXEC);
	CHECK(fd2 >= 0 && fts_calib_save(c, fd2) == 0 && lseek(fd2, 0, SEEK_SET) == 0);
	c2 = fts_calib_load(fd2);
	close(fd2);
	CHECK(c2 != NULL);
	for (int i = 0; i <= 32; i++) {
		uint64_t x = o + (uint64_t)((unsigned __int128)(n - o) * (unsigned)i / 32);
		int64_t ns = 0, err = 0, ns2 = 0, err2 = 0;
		int rc = fts_calib_convert(c, x, &ns, &err), e = errno;
		CHECK(rc == 0 || e == ERANGE);
		CHECK(rc != 0 || err >= 0);
		CHECK(fts_calib_convert(c2, x, &ns2, &err2) == rc);
		CHECK(rc != 0 || (ns == ns2 && err == err2));
	}
	/* beyond both ends: an answer or ERANGE */
	{
		int64_t ns, err;
		CHECK(fts_calib_convert(c, 0, &ns, &err) == 0 || errno == ERANGE);
		CHECK(fts_calib_convert(c, UINT64_MAX, &ns, &err) == 0 || errno == ERANGE);
	}
	errno = 0;
	if (fts_calib_add(c, n + 1000, 0, n + 1000) < 0)
		CHECK(errno == EPERM || errno == EINVAL || errno == ENOMEM);
	fts_calib_free(c2);
	fts_calib_free(c);
	return 0;
}
