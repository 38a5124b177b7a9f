/* A program built against the headers of release 0.1 (tests/consumer/old/include:
 * frozen copies of include/ as that release shipped them; never edit them), run against
 * the library built now. The structs that grow (struct fts_info, struct
 * fts_calib_opts) start with their size: a caller that knows fewer fields than the
 * library must get exactly the fields it knows, and have nothing past its struct read
 * or written. Today the frozen structs are the current ones; once a field is appended,
 * this is a caller with a smaller struct. Exit 0 when every check holds, 1 otherwise.
 * Built without the current include/ on the command line (tests/CMakeLists.txt). */
#define _GNU_SOURCE
#include <errno.h>
#include <faststamp.h>
#include <stdio.h>
#include <string.h>

#if FTS_VERSION_MAJOR != 0 || FTS_VERSION_MINOR != 1
#error "compiled against headers that are not the frozen 0.1 ones"
#endif

#define CANARY 0xa5
#define ROOM 256   /* bytes past the caller's struct that belong to someone else */

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "old_header: %s:%d: %s\n", __func__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

static int untouched(const unsigned char *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

/* fts_get_info() with the caller's size: fields that end within it are written,
 * nothing past it is. */
static void info_sizes(void)
{
	union { struct fts_info i; unsigned char b[sizeof(struct fts_info) + ROOM]; } u;
	size_t sizes[] = { sizeof(struct fts_info), FTS_INFO_MIN_SIZE,
			   offsetof(struct fts_info, samples) + 4 /* ends inside a field */ };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];

		memset(&u, CANARY, sizeof(u));
		u.i.size = n;
		CHECK(fts_get_info(&u.i) == 0);
		CHECK(u.i.size == n);
		CHECK(u.i.backend[0] != '\0' && memchr(u.i.backend, '\0', sizeof(u.i.backend)));
		CHECK(memchr(u.i.reason, '\0', sizeof(u.i.reason)) != NULL);
		CHECK(u.i.env_ignored == 0 || u.i.env_ignored == 1);
		if (n == sizeof(struct fts_info)) {
			/* the last field this header knows was written */
			CHECK(u.i.clock_maxerror_ns >= -1);
			CHECK(untouched(u.b, sizeof(struct fts_info), sizeof(u.b)));
		} else {
			/* only whole fields: a size ending inside samples leaves it alone */
			CHECK(untouched(u.b, offsetof(struct fts_info, samples), sizeof(u.b)));
		}
	}

	/* Too small: EINVAL, and nothing written. */
	memset(&u, CANARY, sizeof(u));
	u.i.size = FTS_INFO_MIN_SIZE - 1;
	errno = 0;
	CHECK(fts_get_info(&u.i) == -1 && errno == EINVAL);
	CHECK(untouched(u.b, sizeof(u.i.size), sizeof(u.b)));
}

/* A history made with opts converts samples of a 1 GHz counter against its
 * reference within its bound. */
static void converts(struct fts_calib *c)
{
	const int64_t base = 5000000000;

	for (uint64_t i = 0; i < 200; i++) {
		uint64_t before = 1000 + i * 1000000;

		CHECK(fts_calib_add(c, before, base + (int64_t)before + 50, before + 100) == 0);
	}
	for (uint64_t x = 1000; x < 199 * 1000000; x += 12345679) {
		int64_t ns, err;

		CHECK(fts_calib_convert(c, x, &ns, &err) == 0);
		CHECK(err >= 0 && err < 1000);
		CHECK(ns - err <= base + (int64_t)x + 100 && ns + err >= base + (int64_t)x - 100);
	}
}

/* fts_calib_new_opts() reads only the caller's size. */
static void opts_sizes(void)
{
	union { struct fts_calib_opts o; unsigned char b[sizeof(struct fts_calib_opts) + ROOM]; } u;
	struct fts_calib *c;

	/* This header's whole struct. */
	memset(&u, 0, sizeof(u));
	u.o.size = sizeof(u.o);
	u.o.max_samples = 64;
	u.o.rate_tol_ppb = 2000;
	c = fts_calib_new_opts(&u.o);
	CHECK(c != NULL);
	if (c) {
		converts(c);
		CHECK(fts_calib_count(c) <= 64);
		fts_calib_free(c);
	}

	/* A caller whose struct ended before max_bytes: what lies there is not its own.
	 * max_bytes = 1 would be refused (EINVAL) if the library read it. */
	memset(&u, 0, sizeof(u));
	u.o.size = offsetof(struct fts_calib_opts, max_bytes);
	u.o.max_samples = 32;
	u.o.max_bytes = 1;
	c = fts_calib_new_opts(&u.o);
	CHECK(c != NULL);
	if (c) {
		converts(c);
		fts_calib_free(c);
	}

	/* The least a caller can pass: the size and max_samples. */
	memset(&u, CANARY, sizeof(u));
	u.o.size = offsetof(struct fts_calib_opts, rate_tol_ppb);
	u.o.max_samples = 0;
	c = fts_calib_new_opts(&u.o);
	CHECK(c != NULL);
	fts_calib_free(c);

	/* Less than that: EINVAL. */
	u.o.size = offsetof(struct fts_calib_opts, max_samples);
	errno = 0;
	CHECK(fts_calib_new_opts(&u.o) == NULL && errno == EINVAL);

	/* A newer caller's larger struct: zero bytes past the library's fields are
	 * defaults; a non-zero one asks for something the library cannot do. */
	memset(&u, 0, sizeof(u));
	u.o.size = sizeof(u.b);
	c = fts_calib_new_opts(&u.o);
	CHECK(c != NULL);
	fts_calib_free(c);
	u.b[sizeof(u.b) - 1] = 1;
	errno = 0;
	CHECK(fts_calib_new_opts(&u.o) == NULL && errno == EINVAL);
}

/* The header's inline store (fts__store_counter, fts__clock_stamp) against the
 * library: the bound covers the clock reads around the stamp. */
static void stamps(void)
{
	for (int i = 0; i < 100; i++) {
		struct timespec a, b;
		fast_timestamp_t s;
		int64_t ns, err, lo, hi;

		clock_gettime(CLOCK_REALTIME, &a);
		store_fast_timestamp(&s);
		clock_gettime(CLOCK_REALTIME, &b);
		CHECK(fts_convert(&s, &ns, &err) == 0);
		lo = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		hi = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		CHECK(err >= 0 && ns + err >= lo && ns - err <= hi);
	}
}

int main(void)
{
	info_sizes();
	opts_sizes();
	stamps();
	if (failures) {
		fprintf(stderr, "old_header: %d checks failed\n", failures);
		return 1;
	}
	printf("old_header: the 0.1 headers' structs (fts_info %zu bytes, fts_calib_opts %zu)"
	       " work against this library\n", sizeof(struct fts_info),
	       sizeof(struct fts_calib_opts));
	return 0;
}
