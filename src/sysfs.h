/* sysfs.h - sysfs.c: text parsers for kernel files (fuzzed) and /etc/passwd. Not
 * installed. */
#ifndef FTS__SYSFS_H
#define FTS__SYSFS_H

#include <stddef.h>
#include <stdint.h>

/* Read a small text file into buf, NUL-terminated. Bytes read or negative errno. */
long fts__sysfs_read_text(const char *path, char *buf, size_t len);
/* First whitespace-delimited word of text into out (len bytes). 0 or -EINVAL. */
int fts__sysfs_parse_word(const char *text, char *out, size_t len);
/* Does a /proc/cpuinfo "flags" line in text contain flag? 1, 0. */
int fts__sysfs_cpuinfo_has_flag(const char *text, const char *flag);
/* The kernel's boot id (/proc/sys/kernel/random/boot_id: 32 hex digits with dashes)
 * from text into id. 0, or -EINVAL (id then holds no meaning). */
int fts__sysfs_parse_boot_id(const char *text, uint8_t id[16]);
/* The kernel's current clocksource into out; 0 or negative errno. */
int fts__sysfs_clocksource(char *out, size_t len);
/* A device-tree property holding one big-endian cell (4 bytes) or two (8 bytes), as
 * read from /proc/device-tree, into *out. 0 or -EINVAL (other lengths). */
int fts__sysfs_parse_dt_cells(const void *buf, size_t len, uint64_t *out);
/* 1 when name is a clocksource only an x86 kernel has ("tsc", "kvm-clock", ...). On
 * another architecture that means /sys is the host's: user-mode emulation. */
int fts__sysfs_clocksource_is_x86(const char *name);
/* Is line (len bytes, no newline) name's entry in passwd(5) form (name:password:uid:gid:
 * ...)? 1 with its uid in *uid (decimal, under 2^32 - 1), else 0. */
int fts__parse_passwd_line(const char *line, size_t len, const char *name, uint32_t *uid);
/* name's uid from the passwd(5) file at path, its first entry, without NSS: 1 with *uid,
 * 0 not there, or negative errno (unreadable). A line over 4 KiB is skipped. */
int fts__passwd_uid(const char *path, const char *name, uint32_t *uid);

#endif /* FTS__SYSFS_H */
