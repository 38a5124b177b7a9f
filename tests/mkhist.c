/* mkhist.c - writes a small record whose text fields (the clocksource, an event's
 * name) hold terminal escape sequences and other control bytes, through the library's
 * own writer: what a hostile or damaged file may show `faststamp history`
 * (tests/tool_file_text.sh). Usage: mkhist FILE [BASE]: samples at counter BASE (default
 * 0) + 1e9, 2e9 and 3e9 at 1 GHz, reading 1700000001, ...02 and ...03 s. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "histfile.h"

int main(int argc, char **argv)
{
	struct fts__head h = { .kind = FTS__KIND_TSC, .counter_hz = 1000000000,
			       .created_ns = 1700000000000000000 };
	struct fts__event e = { .type = FTS__EV_STEP, .counter = 2000000000,
				.realtime_ns = 1700000002000000000, .value_ns = 5000 };
	unsigned char buf[3 * FTS__SAMPLE_BYTES], ev[FTS__EVENT_BYTES];
	size_t n = 0;
	unsigned long long base;
	int fd;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: mkhist FILE [BASE]\n");
		return 2;
	}
	base = argc == 3 ? strtoull(argv[2], NULL, 0) : 0;
	e.counter += base;
	fts__histfile_boot_id(h.boot_id);
	/* ESC [2J clears a terminal, ESC ]0; sets its title: neither may reach one. */
	snprintf(h.clocksource, sizeof(h.clocksource), "kvm\033[2J\tclock\\");
	snprintf(e.what, sizeof(e.what), "step\033]0;owned\007\r\x9b" "31m");
	for (int i = 0; i < 3; i++)
		n += fts__histfile_put_sample(buf + n, base + 1000000000ull * (unsigned)(i + 1) - 10,
					      1700000000000000000 + 1000000000ll * (i + 1),
					      base + 1000000000ull * (unsigned)(i + 1) + 10, 0);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || fts__histfile_write_header(fd, &h) < 0 ||
	    fts__histfile_write_block(fd, FTS__BLK_SAMPLES, buf, (uint32_t)n) < 0 ||
	    fts__histfile_write_block(fd, FTS__BLK_EVENT, ev, (uint32_t)fts__histfile_put_event(ev, &e)) < 0 ||
	    close(fd) < 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
