/* test_parsers.c - tables of inputs for the kernel-text parsers in sysfs.c. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testmain.h"

#include "crc32.h"
#include "internal.h"
#include "sysfs.h"

static void test_parse_word(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		int rc;
		const char *word;
	} cases[] = {
		{ "tsc\n", 32, 0, "tsc" },
		{ "tsc", 32, 0, "tsc" },
		{ "  hpet  \n", 32, 0, "hpet" },
		{ "\t\r\v\fkvm-clock\r\n", 32, 0, "kvm-clock" },
		{ "arch_sys_counter riscv\n", 32, 0, "arch_sys_counter" },
		{ "acpi_pm\n", 8, 0, "acpi_pm" },   /* 7 chars + NUL fit exactly */
		{ "acpi_pm\n", 7, -EINVAL, NULL },  /* no room for the NUL */
		{ "acpi_pm\n", 1, -EINVAL, NULL },
		{ "x", 2, 0, "x" },
		{ "x", 1, -EINVAL, NULL },
		{ "", 32, -EINVAL, NULL },
		{ "\n", 32, -EINVAL, NULL },
		{ " \t \r\n ", 32, -EINVAL, NULL },
		{ "a\0b", 32, 0, "a" },             /* the text ends at its NUL */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		memset(out, '#', sizeof(out));
		int rc = fts__sysfs_parse_word(cases[i].text, out, cases[i].len);
		if (rc != cases[i].rc)
			fail_msg("case %zu \"%s\" len %zu: rc %d, want %d", i, cases[i].text,
				 cases[i].len, rc, cases[i].rc);
		if (rc == 0) {
			assert_string_equal(out, cases[i].word);
			/* Nothing written past the NUL. */
			assert_int_equal(out[strlen(out) + 1], '#');
		} else {
			assert_int_equal(out[0], '#');
		}
	}
	{
		char out[8];
		assert_int_equal(fts__sysfs_parse_word(NULL, out, sizeof(out)), -EINVAL);
		assert_int_equal(fts__sysfs_parse_word("tsc", NULL, 8), -EINVAL);
		assert_int_equal(fts__sysfs_parse_word("tsc", out, 0), -EINVAL);
	}
}

#define CPUINFO_X86                                                                     \
	"processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n"  \
	"flags\t\t: fpu vme tsc msr constant_tsc nonstop_tsc tsc_known_freq rdtscp lm\n" \
	"bugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: fpu invtsc_cpu1_only\n"

static void test_cpuinfo_has_flag(void **state)
{
	static const struct {
		const char *text, *flag;
		int want;
	} cases[] = {
		{ CPUINFO_X86, "constant_tsc", 1 },
		{ CPUINFO_X86, "nonstop_tsc", 1 },
		{ CPUINFO_X86, "tsc_known_freq", 1 },
		{ CPUINFO_X86, "rdtscp", 1 },
		{ CPUINFO_X86, "fpu", 1 },            /* first word */
		{ CPUINFO_X86, "lm", 1 },             /* last word, before the newline */
		{ CPUINFO_X86, "tsc", 1 },
		{ CPUINFO_X86, "constant", 0 },       /* a prefix is not the flag */
		{ CPUINFO_X86, "tsc_known", 0 },
		{ CPUINFO_X86, "_tsc", 0 },           /* nor a suffix */
		{ CPUINFO_X86, "invtsc_cpu1_only", 0 }, /* only the first flags line counts */
		{ CPUINFO_X86, "spectre_v1", 0 },     /* another line */
		{ CPUINFO_X86, "GenuineIntel", 0 },
		{ CPUINFO_X86, "flags", 0 },
		{ CPUINFO_X86, "", 0 },
		{ "flags\t\t: a b c", "c", 1 },      /* no final newline */
		{ "flags: a\tb\rc\n", "b", 1 },      /* any whitespace separates */
		{ "flags tsc\n", "tsc", 0 },          /* no colon */
		{ "flags\n", "tsc", 0 },
		{ "Features\t: fp asimd evtstrm\n", "evtstrm", 0 }, /* arm64 has no flags line */
		{ "", "tsc", 0 },
		{ "\n\n\n", "tsc", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = fts__sysfs_cpuinfo_has_flag(cases[i].text, cases[i].flag);
		if (got != cases[i].want)
			fail_msg("case %zu flag \"%s\": got %d, want %d", i, cases[i].flag, got,
				 cases[i].want);
	}
	assert_int_equal(fts__sysfs_cpuinfo_has_flag(NULL, "tsc"), 0);
	assert_int_equal(fts__sysfs_cpuinfo_has_flag(CPUINFO_X86, NULL), 0);
}

/* A file in a fresh temporary directory, removed by the caller. */
/* The boot id: 32 hex digits, dashes and the newline skipped; anything short refused. */
static void test_parse_boot_id(void **state)
{
	uint8_t id[16];
	(void)state;

	assert_int_equal(fts__sysfs_parse_boot_id("0123abcd-4567-89ef-0011-2233445566ff\n", id), 0);
	assert_int_equal(id[0], 0x01);
	assert_int_equal(id[3], 0xcd);
	assert_int_equal(id[15], 0xff);
	assert_int_equal(fts__sysfs_parse_boot_id("0123abcd-4567-89ef", id), -EINVAL);
	assert_int_equal(fts__sysfs_parse_boot_id("", id), -EINVAL);
}

/* A passwd(5) line: the name whole, then a password field, then a decimal uid followed
 * by the rest; anything else is not the entry. */
static void test_passwd_line(void **state)
{
	static const struct { const char *line; int want; uint32_t uid; } cases[] = {
		{ "faststamp:x:999:999::/nonexistent:/usr/sbin/nologin", 1, 999 },
		{ "faststamp::0:0::/:/bin/sh", 1, 0 },
		{ "faststamp:x:4294967294:1:::", 1, 4294967294u },
		{ "faststamp:x:4294967295:1:::", 0, 0 },      /* (uid_t)-1 is no uid */
		{ "faststamp:x:99999999999999999999:1:::", 0, 0 },
		{ "faststampd:x:999:999:::", 0, 0 },          /* another name it begins */
		{ "faststampx:999:1:1:::", 0, 0 },
		{ "fast:x:999:999:::", 0, 0 },
		{ "faststamp", 0, 0 },
		{ "faststamp:x", 0, 0 },
		{ "faststamp:x:", 0, 0 },
		{ "faststamp:x::999:::", 0, 0 },              /* an empty uid */
		{ "faststamp:x:9a9:999:::", 0, 0 },
		{ "faststamp:x:-1:999:::", 0, 0 },
		{ "faststamp:x:999", 0, 0 },                  /* cut after the uid */
		{ "+faststamp:x:999:999:::", 0, 0 },
		{ "", 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t uid = 12345;
		int got = fts__parse_passwd_line(cases[i].line, strlen(cases[i].line), "faststamp", &uid);
		if (got != cases[i].want || (got && uid != cases[i].uid))
			fail_msg("case %zu \"%s\": got %d uid %u, want %d uid %u", i, cases[i].line,
				 got, uid, cases[i].want, cases[i].uid);
	}
	/* the length bounds the line: what follows it is not read */
	uint32_t uid = 0;
	assert_int_equal(fts__parse_passwd_line("faststamp:x:12:0", 14, "faststamp", &uid), 0);
	assert_int_equal(fts__parse_passwd_line("faststamp:x:1", 13, "faststamp", &uid), 0);
	assert_int_equal(fts__parse_passwd_line(NULL, 0, "faststamp", &uid), 0);
	assert_int_equal(fts__parse_passwd_line("x:x:1:1", 7, "", &uid), 0);
}

static void write_file(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static void test_read_text(void **state)
{
	char dir[] = "/tmp/fts-parsers-XXXXXX", path[64], buf[16];
	long r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);

	/* Missing file: -ENOENT, buffer untouched. */
	memset(buf, '#', sizeof(buf));
	assert_int_equal(fts__sysfs_read_text(path, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(buf[0], '#');

	/* NULL arguments and an empty buffer: -EINVAL. */
	assert_int_equal(fts__sysfs_read_text(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fts__sysfs_read_text(path, NULL, sizeof(buf)), -EINVAL);
	assert_int_equal(fts__sysfs_read_text(path, buf, 0), -EINVAL);

	/* A short file, whole and NUL-terminated. */
	write_file(path, "tsc\n", 4);
	r = fts__sysfs_read_text(path, buf, sizeof(buf));
	assert_int_equal(r, 4);
	assert_string_equal(buf, "tsc\n");

	/* An empty file. */
	write_file(path, "", 0);
	memset(buf, '#', sizeof(buf));
	assert_int_equal(fts__sysfs_read_text(path, buf, sizeof(buf)), 0);
	assert_int_equal(buf[0], '\0');

	/* Longer than the buffer: truncated to len - 1 bytes and a NUL. */
	write_file(path, "0123456789abcdefghijklmnopqrstuvwxyz", 36);
	memset(buf, '#', sizeof(buf));
	r = fts__sysfs_read_text(path, buf, sizeof(buf));
	assert_int_equal(r, (long)sizeof(buf) - 1);
	assert_int_equal(buf[sizeof(buf) - 1], '\0');
	assert_memory_equal(buf, "0123456789abcde", sizeof(buf));

	/* A one-byte buffer holds only the NUL. */
	buf[0] = '#';
	assert_int_equal(fts__sysfs_read_text(path, buf, 1), 0);
	assert_int_equal(buf[0], '\0');

	/* A directory cannot be read as text. */
	assert_int_equal(fts__sysfs_read_text(dir, buf, sizeof(buf)), -EISDIR);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* name's uid from a passwd file: its first entry, across read boundaries, after lines
 * longer than the reader's buffer (never taking what follows in such a line for an
 * entry), the last without a newline; a missing file or a directory is an error. */
static void test_passwd_file(void **state)
{
	char dir[] = "/tmp/fts-parsers-XXXXXX", path[64];
	static char text[20000];
	uint32_t uid = 0;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/passwd", dir);
	assert_int_equal(fts__passwd_uid(path, "faststamp", &uid), -ENOENT);
	assert_int_equal(fts__passwd_uid(dir, "faststamp", &uid), -EISDIR);

	n = (size_t)snprintf(text, sizeof(text), "root:x:0:0::/:/bin/sh\nfaststamp:x:101:101:::");
	write_file(path, text, n);   /* no newline at the end */
	assert_int_equal(fts__passwd_uid(path, "faststamp", &uid), 1);
	assert_int_equal(uid, 101);
	assert_int_equal(fts__passwd_uid(path, "nobody", &uid), 0);

	/* the entry across the first read's end, and a second one after it */
	n = (size_t)snprintf(text, sizeof(text), "a:x:1:1:%4080s::\nfaststamp:x:102:1:::\n"
			     "faststamp:x:103:1:::\n", "g");
	write_file(path, text, n);
	assert_int_equal(fts__passwd_uid(path, "faststamp", &uid), 1);
	assert_int_equal(uid, 102);

	/* a line of 10,000 bytes, holding what looks like an entry at 4,096 and 8,192 */
	memset(text, 'g', sizeof(text));
	memcpy(text, "a:x:1:1:", 8);
	memcpy(text + 4096, "faststamp:x:104:1:::", 20);
	memcpy(text + 8192, "faststamp:x:105:1:::", 20);
	n = 10000;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\nfaststamp:x:106:1:::\n");
	write_file(path, text, n);
	assert_int_equal(fts__passwd_uid(path, "faststamp", &uid), 1);
	assert_int_equal(uid, 106);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The kernel's own file, when there is one: what fts__sysfs_clocksource returns is the
 * first word of it. */
static void test_clocksource_matches_file(void **state)
{
	const char *p = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
	char raw[128], want[32], got[32];
	long r = fts__sysfs_read_text(p, raw, sizeof(raw));

	(void)state;
	if (r < 0) {
		FTS_SKIP("%s unreadable (%s)", p, strerror((int)-r));
	}
	assert_int_equal(fts__sysfs_parse_word(raw, want, sizeof(want)), 0);
	assert_int_equal(fts__sysfs_clocksource(got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_int_equal(fts__sysfs_clocksource(got, 1), -EINVAL);
}

/* Every path of fts__crc32 gives the tables' value: lengths 0 to 1100 at every
 * alignment mod 16, from random seeds, in one piece and split anywhere; and the
 * standard check value. */
static void test_crc32_paths_agree(void **state)
{
	static unsigned char buf[1100 + 16];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	(void)state;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	assert_int_equal(fts__crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(fts__crc32_tables(0, "123456789", 9), 0xcbf43926u);
	for (size_t len = 0; len <= 1100; len++) {
		size_t off = len % 16, cut = (len * 7919) % (len + 1);
		uint32_t seed = (uint32_t)(x >> (len % 32)), want;
		want = fts__crc32_tables(seed, buf + off, len);
		assert_int_equal(fts__crc32(seed, buf + off, len), want);
		assert_int_equal(fts__crc32(fts__crc32(seed, buf + off, cut), buf + off + cut, len - cut),
				 want);
	}
	print_message("CRC-32 path here: %s\n", fts__crc32_path());
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_paths_agree),
		cmocka_unit_test(test_parse_word),
		cmocka_unit_test(test_cpuinfo_has_flag),
		cmocka_unit_test(test_parse_boot_id),
		cmocka_unit_test(test_passwd_line),
		cmocka_unit_test(test_passwd_file),
		cmocka_unit_test(test_read_text),
		cmocka_unit_test(test_clocksource_matches_file),
	};
	return fts_test_run(tests, argc, argv);
}
