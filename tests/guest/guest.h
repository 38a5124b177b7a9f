/* guest.h - what the in-guest programs of the fault lab share (guest_stamp.c,
 * guest_ftrace.c): reading and sleeping on the clocks, writing a kernel file, and the
 * kernel's command line. Each program is built alone, -static (scripts/guest/build). */
#ifndef FTS_GUEST_H
#define FTS_GUEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEC 1000000000LL

static inline int64_t now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* Until CLOCK_MONOTONIC reads mono, whatever signals arrive. */
static inline void sleep_until(int64_t mono)
{
	struct timespec ts = { .tv_sec = mono / SEC, .tv_nsec = mono % SEC };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Write text to the kernel file at path (flags: O_TRUNC or 0). 0 or a negative errno. */
static inline int write_kernel_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | flags), rc = 0;
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Does the kernel's command line hold word? */
static inline int kernel_cmdline_has(const char *word)
{
	char line[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	int found = f && fgets(line, sizeof(line), f) && strstr(line, word);

	if (f)
		fclose(f);
	return found;
}

#endif /* FTS_GUEST_H */
