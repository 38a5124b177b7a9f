/* sysfs.c - reading and parsing the kernel's text files, and a user's uid from
 * /etc/passwd. The parsers take text, not paths, so they can be fuzzed and tested on
 * any input. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sysfs.h"

#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

long fts__sysfs_read_text(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	if (!path || !buf || len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (long)got;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

int fts__sysfs_parse_word(const char *text, char *out, size_t len)
{
	size_t n = 0;

	if (!text || !out || len == 0)
		return -EINVAL;
	while (is_space(*text))
		text++;
	while (text[n] && !is_space(text[n]))
		n++;
	if (n == 0 || n >= len)
		return -EINVAL;
	memcpy(out, text, n);
	out[n] = '\0';
	return 0;
}

int fts__sysfs_cpuinfo_has_flag(const char *text, const char *flag)
{
	size_t fl;

	if (!text || !flag || !(fl = strlen(flag)))
		return 0;
	/* The first "flags" line: the flags of CPU 0, which all CPUs share. */
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t ll = end ? (size_t)(end - line) : strlen(line);
		if (ll > 5 && !strncmp(line, "flags", 5)) {
			const char *p = memchr(line, ':', ll);
			if (!p)
				return 0;
			for (p++; p < line + ll;) {
				size_t wl;
				while (p < line + ll && is_space(*p))
					p++;
				for (wl = 0; p + wl < line + ll && !is_space(p[wl]); wl++)
					;
				if (wl == fl && !memcmp(p, flag, fl))
					return 1;
				p += wl;
			}
			return 0;
		}
		if (!end)
			break;
		line = end + 1;
	}
	return 0;
}

int fts__sysfs_clocksource(char *out, size_t len)
{
	char buf[128];
	long r = fts__sysfs_read_text(CLOCKSOURCE_PATH, buf, sizeof(buf));
	if (r < 0)
		return (int)r;
	return fts__sysfs_parse_word(buf, out, len);
}

int fts__sysfs_parse_dt_cells(const void *buf, size_t len, uint64_t *out)
{
	const unsigned char *p = buf;
	uint64_t v = 0;

	if (!buf || !out || (len != 4 && len != 8))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		v = v << 8 | p[i];
	*out = v;
	return 0;
}

int fts__sysfs_clocksource_is_x86(const char *name)
{
	/* Linux's x86 clocksource names (arch/x86, drivers/clocksource/hyperv_timer.c). */
	static const char *const x86[] = { "tsc", "tsc-early", "kvm-clock", "hpet", "acpi_pm",
					   "hyperv_clocksource_tsc_page",
					   "hyperv_clocksource_msr", "xen", "pit", "vmware-tsc" };

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(x86) / sizeof(x86[0]); i++)
		if (!strcmp(name, x86[i]))
			return 1;
	return 0;
}

int fts__sysfs_parse_boot_id(const char *text, uint8_t id[16])
{
	int n = 0;

	/* 32 hex digits, with dashes */
	for (const char *p = text; *p && n < 32; p++) {
		int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (v < 0)
			continue;
		id[n / 2] = (uint8_t)(id[n / 2] << 4 | v);
		n++;
	}
	return n == 32 ? 0 : -EINVAL;
}

int fts__parse_passwd_line(const char *line, size_t len, const char *name, uint32_t *uid)
{
	size_t n = name ? strlen(name) : 0, i;
	uint64_t v = 0;

	if (!line || n == 0 || len <= n + 1 || memcmp(line, name, n) || line[n] != ':')
		return 0;
	/* the password field, then the uid: decimal digits up to the next ':' */
	for (i = n + 1; i < len && line[i] != ':'; i++)
		;
	if (++i >= len || line[i] == ':')
		return 0;
	for (; i < len && line[i] != ':'; i++) {
		if (line[i] < '0' || line[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(line[i] - '0');
		if (v >= UINT32_MAX)   /* (uid_t)-1 is no uid; v stays far from overflow */
			return 0;
	}
	if (i >= len)   /* the gid and the rest must follow */
		return 0;
	*uid = (uint32_t)v;
	return 1;
}

int fts__passwd_uid(const char *path, const char *name, uint32_t *uid)
{
	char buf[4096];
	size_t have = 0;
	int fd, found = 0, skip = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		size_t at = 0;
		char *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			found = -errno;
			break;
		}
		have += (size_t)r;
		/* every whole line; at the end of the file, the last one without its newline */
		while ((nl = memchr(buf + at, '\n', have - at)) || (r == 0 && at < have)) {
			size_t end = nl ? (size_t)(nl - buf) : have;
			if (!skip && fts__parse_passwd_line(buf + at, end - at, name, uid)) {
				found = 1;
				goto out;
			}
			skip = 0;
			at = nl ? end + 1 : have;
		}
		if (r == 0)
			break;
		memmove(buf, buf + at, have - at);
		have -= at;
		if (have == sizeof(buf)) {   /* a line longer than the buffer: not one to read */
			have = 0;
			skip = 1;
		}
	}
out:
	close(fd);
	return found;
}
