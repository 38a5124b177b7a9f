/* faststamp convert - stamps to times, later, in another process: with a history file
 * (fts_clock_record, fts_clock_save, fts_calib_save), read stamps and print what a
 * clock (CLOCK_REALTIME, or --clock) read when each was stored. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faststamp.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp convert --history FILE [--in FILE] [--binary]\n"
	"                         [--format ns|timespec|iso] [--bound]\n"
	"                         [--clock realtime|tai|monotonic|boottime|raw]\n"
	"  Convert stamps with the history in FILE (a record or a saved history) and print\n"
	"  one line per stamp: what the clock read when it was stored.\n"
	"  --history FILE  the history file\n"
	"  --clock C       CLOCK_REALTIME (the default), CLOCK_TAI, CLOCK_MONOTONIC,\n"
	"                  CLOCK_BOOTTIME or CLOCK_MONOTONIC_RAW: files of format 3\n"
	"                  (fts_clock_record, fts_clock_save) hold every clock; older ones,\n"
	"                  and fts_calib_save's, CLOCK_REALTIME alone (the others: exit 1)\n"
	"  --in FILE       stamps from FILE (default: standard input, also for '-')\n"
	"  --binary        stamps as little-endian 64-bit words (default: one per line,\n"
	"                  decimal, or hexadecimal with 0x, up to 255 bytes)\n"
	"  --format F      ns (ns since the epoch, the default), timespec (SEC.NSEC) or\n"
	"                  iso (UTC, YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ)\n"
	"  --bound         after the time, a space and the error bound in ns\n"
	"A stamp that is a CLOCK_REALTIME reading (bit 63: stored after a counter fault)\n"
	"converts to CLOCK_REALTIME alone.\n"
	"Exit 0 when every stamp converted, 1 when some did not (each one named on\n"
	"stderr with its line or word, the rest still converted), 2 on a usage error.\n";

enum format { F_NS, F_TIMESPEC, F_ISO };

static void print_time(int64_t ns, int64_t err, enum format f, int bound)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (f == F_NS) {
		printf("%" PRId64, ns);
	} else if (f == F_TIMESPEC) {
		printf("%" PRId64 ".%09" PRId64, sec, frac);
	} else {
		char day[32];
		if (fts_tool_utc(sec, day, sizeof(day)) < 0)
			snprintf(day, sizeof(day), "(year out of range)");
		printf("%s.%09" PRId64 "Z", day, frac);
	}
	if (bound)
		printf(" %" PRId64, err);
	putchar('\n');
}

/* A line of the text input: no stamp needs more than LINE_KEEP bytes (20 decimal
 * digits, or 0x and 16 hexadecimal ones, with some blanks around), so a longer one is
 * refused without being kept. Every byte up to the newline is read, NULs included, so
 * the next read starts the next line and lines keep their numbers. */
enum { LINE_KEEP = 255 };
struct line {
	char b[LINE_KEEP + 1];
	size_t len;
	int nul, longer;
};

/* The next line into *l, without its newline: 1, or 0 at the end of the input. */
static int read_line(FILE *f, struct line *l)
{
	int ch;

	l->len = 0;
	l->nul = l->longer = 0;
	while ((ch = getc(f)) != EOF && ch != '\n') {
		l->nul |= ch == 0;
		if (l->len < LINE_KEEP)
			l->b[l->len++] = (char)ch;
		else
			l->longer = 1;
	}
	l->b[l->len] = '\0';
	return ch != EOF || l->len || l->longer;
}

static int digit(char c, unsigned base)
{
	unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
		     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
		     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99;
	return d < base ? (int)d : -1;
}

/* A stamp from a line of text: decimal digits, or 0x and hexadecimal ones, blanks (space,
 * tab) around them, and a '\r' at the end (a CRLF file). Nothing else: no sign, no other
 * space (strtoull would take "\v-5" as a huge number), no empty number. NULL and *out,
 * or why the line is not a stamp. */
static const char *parse_stamp(const char *s, size_t len, uint64_t *out)
{
	const char *e = s + len;
	unsigned base = 10;
	uint64_t v = 0;

	if (e > s && e[-1] == '\r')
		e--;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (s == e)
		return "empty, not a stamp";
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; s < e; s++) {
		int d = digit(*s, base);
		if (d < 0)
			return "not a stamp (decimal, or hexadecimal with 0x)";
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return "out of range (a stamp is 64 bits)";
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return NULL;
}

/* A stamp as the library would convert it: counter values through the history, clock
 * readings (bit 63) as they are, on CLOCK_REALTIME (k 0) alone (ENOTSUP). */
static int convert(const struct fts_calib *h, int k, fast_timestamp_t s, int64_t *ns,
		   int64_t *err)
{
	if (s & FTS_STAMP_CLOCK_TAG) {
		if (k != 0) {
			errno = ENOTSUP;
			return -1;
		}
		*ns = (int64_t)(s << 1) >> 1;
		*err = 0;
		return 0;
	}
	return fts_calib_convert(h, s, ns, err);
}

int fts_tool_convert(int argc, char **argv)
{
	const char *hist = NULL, *in = NULL;
	enum format f = F_NS;
	int binary = 0, bound = 0, bad = 0, clk = 0;
	struct fts_calib *h;
	FILE *src = stdin;
	uint64_t n = 0;

	static const char *const names[] = { "--history", "--in", "--format", "--clock",
					     "--binary", "--bound" };
	struct fts_tool_opts opts = { "convert", usage, names, 6, 4, 0, 0 };
	for (int i = 1; i < argc; i++) {
		const char *v;
		switch (fts_tool_opt(&opts, argc, argv, &i, &v)) {
		case 0:
			hist = v;
			break;
		case 1:
			in = v;
			break;
		case 2:
			if (!strcmp(v, "ns"))
				f = F_NS;
			else if (!strcmp(v, "timespec"))
				f = F_TIMESPEC;
			else if (!strcmp(v, "iso"))
				f = F_ISO;
			else
				return fts_tool_usage_error("convert", usage,
							    "unknown --format '%s' (ns, timespec or iso)", v);
			break;
		case 3:
			for (clk = 0; clk < FTS_TOOL_NCLK && strcmp(v, fts_tool_clock_arg[clk]); clk++)
				;
			if (clk == FTS_TOOL_NCLK)
				return fts_tool_usage_error("convert", usage, "unknown --clock '%s' "
							    "(realtime, tai, monotonic, boottime or raw)", v);
			break;
		case 4:
			binary = 1;
			break;
		case 5:
			bound = 1;
			break;
		case FTS_OPT_ARG:
			return fts_tool_usage_error("convert", usage, "unexpected argument '%s'", v);
		case FTS_OPT_END:
			break;
		case FTS_OPT_HELP:
			return 0;
		default:
			return 2;
		}
	}
	if (!hist)
		return fts_tool_usage_error("convert", usage, "%s", "--history FILE is required");
	if (!(h = fts_tool_load_clock("convert", hist, clk, NULL)))
		return 1;
	if (in && strcmp(in, "-") && !(src = fopen(in, binary ? "rb" : "r"))) {
		fprintf(stderr, "faststamp convert: %s: %s\n", in, strerror(errno));
		fts_calib_free(h);
		return 1;
	}
	for (;;) {
		fast_timestamp_t s;
		int64_t ns, err;
		struct line line;
		const char *why;

		if (binary) {
			unsigned char w[8];
			size_t got = fread(w, 1, sizeof(w), src);
			if (got == 0)
				break;
			n++;
			if (got < sizeof(w)) {
				fprintf(stderr, "faststamp convert: word %" PRIu64 ": %zu bytes, not 8 "
					"(the input ends inside it)\n", n, got);
				bad = 1;
				break;
			}
			s = 0;
			for (int k = 7; k >= 0; k--)
				s = s << 8 | w[k];
		} else {
			if (!read_line(src, &line))
				break;
			n++;
			why = line.longer ? "longer than 255 bytes, not a stamp"
			      : line.nul ? "holds a NUL byte, not a stamp"
					 : parse_stamp(line.b, line.len, &s);
			if (why) {
				char shown[4 * LINE_KEEP + 1];
				fprintf(stderr, "faststamp convert: line %" PRIu64 ": '%s%s': %s\n", n,
					fts_tool_clean(shown, sizeof(shown), line.b, line.len),
					line.longer ? "..." : "", why);
				bad = 1;
				continue;
			}
		}
		if (convert(h, clk, s, &ns, &err) < 0) {
			int e = errno;
			fprintf(stderr, "faststamp convert: %s %" PRIu64 ": stamp %#" PRIx64 ": %s%s\n",
				binary ? "word" : "line", n, s,
				e == ENOTSUP ? "a CLOCK_REALTIME reading (bit 63), not convertible to "
					     : strerror(e),
				e == ENOTSUP ? fts_tool_clock_name[clk] : "");
			bad = 1;
			continue;
		}
		print_time(ns, err, f, bound);
	}
	if (ferror(src)) {
		fprintf(stderr, "faststamp convert: reading %s: %s\n", in ? in : "standard input",
			strerror(errno));
		bad = 1;
	}
	if (src != stdin)
		fclose(src);
	fts_calib_free(h);
	return bad;   /* main() checks that the times reached standard output */
}
