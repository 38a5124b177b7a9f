/* faststamp convert - stamps to times, later, in another process: with a history file
 * (fts_clock_record, fts_clock_save, fts_calib_save), read stamps and print what a
 * clock (CLOCK_REALTIME, or --clock) read when each was stored. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faststamp.h"
#include "clock.h"
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
	"  --format F      ns (the clock's reading in ns, the default), timespec\n"
	"                  (SEC.NSEC) or iso: realtime as UTC, YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ;\n"
	"                  tai as the same calendar, with ' TAI' for the Z; monotonic,\n"
	"                  boottime and raw as time since the boot, PT<H>H<MM>M<SS.N>S\n"
	"  --bound         after the time, a space and the error bound in ns\n"
	"A stamp outside the history (before its oldest or past its newest sample) is\n"
	"extrapolated: its line ends with ' extrapolated', and stderr counts them. One\n"
	"further away than the history is long (and 1 s) is out of its reach: an error.\n"
	"A stamp that is a CLOCK_REALTIME reading (bit 63: stored after a counter fault)\n"
	"converts to CLOCK_REALTIME alone.\n"
	"Exit 0 when every stamp converted, 1 when some did not (the first 100 named on\n"
	"stderr with their line or word, the rest still converted, and counted; after 10\n"
	"with none converted, the input is not read on), 2 on a usage error.\n";

enum format { F_NS, F_TIMESPEC, F_ISO };

/* --format iso: what clock k's reading means. REALTIME: UTC, with its Z; TAI: the same
 * calendar on TAI's seconds, which is not UTC (no Z); the others count from the boot:
 * an ISO 8601 duration. */
static void print_iso(int k, int64_t sec, int64_t frac)
{
	char day[32];

	if (k == FTS__CLK_REALTIME || k == FTS__CLK_TAI) {
		if (fts_tool_utc(sec, day, sizeof(day)) < 0)
			snprintf(day, sizeof(day), "(year out of range)");
		printf("%s.%09" PRId64 "%s", day, frac, k == FTS__CLK_TAI ? " TAI" : "Z");
		return;
	}
	if (sec < 0) {   /* before the boot: only a history file can say so */
		putchar('-');
		sec = -sec - (frac != 0);
		frac = frac ? 1000000000 - frac : 0;
	}
	printf("PT%" PRId64 "H%02" PRId64 "M%02" PRId64 ".%09" PRId64 "S", sec / 3600, sec / 60 % 60,
	       sec % 60, frac);
}

static void print_time(int k, int64_t ns, int64_t err, enum format f, int bound, int outside)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (f == F_NS)
		printf("%" PRId64, ns);
	else if (f == F_TIMESPEC)
		printf("%" PRId64 ".%09" PRId64, sec, frac);
	else
		print_iso(k, sec, frac);
	if (bound)
		printf(" %" PRId64, err);
	fputs(outside ? " extrapolated\n" : "\n", stdout);
}

/* A line of the text input: no stamp needs more than LINE_KEEP bytes (20 decimal
 * digits, or 0x and 16 hexadecimal ones, with some blanks around), so a longer one is
 * refused without being kept. Every byte up to the newline is read, NULs included, so
 * the next read starts the next line and lines keep their numbers. */
enum { LINE_KEEP = 255, LINE_TEXT = 65536 };
struct line {
	char b[LINE_KEEP + 1];
	size_t len;
	int nul, longer, binary;   /* binary: a byte no text of stamps holds */
	int endless;               /* LINE_TEXT bytes and no newline: not text */
};

/* The next line into *l, without its newline: 1, or 0 at the end of the input. A line
 * is read to its end, but no further than LINE_TEXT bytes (/dev/zero has no end). */
static int read_line(FILE *f, struct line *l)
{
	size_t seen = 0;
	int ch;

	l->len = 0;
	l->nul = l->longer = l->binary = l->endless = 0;
	while ((ch = getc(f)) != EOF && ch != '\n') {
		l->nul |= ch == 0;
		l->binary |= ch < 0x20 ? ch != '\t' && ch != '\r' && ch != '\v' && ch != '\f' : ch >= 0x7f;
		if (l->len < LINE_KEEP)
			l->b[l->len++] = (char)ch;
		else
			l->longer = 1;
		if (++seen == LINE_TEXT) {
			l->endless = 1;
			break;
		}
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

/* What went wrong so far, and what it says of the input. */
enum { NAMED = 100, GIVE_UP = 10 };
struct tally {
	uint64_t errors, converted, outside;
	int binary;   /* text lines with bytes no text holds */
	int text;     /* --binary words that are text */
	int stop;     /* the input is not read on */
};

/* An error at line or word n: named while fewer than NAMED were. */
__attribute__((format(printf, 4, 5)))
static void problem(struct tally *t, int binary, uint64_t n, const char *fmt, ...)
{
	va_list ap;

	if (t->errors++ >= NAMED)
		return;
	fprintf(stderr, "faststamp convert: %s %" PRIu64 ": ", binary ? "word" : "line", n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* GIVE_UP errors and not one stamp converted: the input is not stamps read this way (a
 * binary file as text, text as --binary, /dev/zero), and reading on only repeats it. */
static int give_up(struct tally *t)
{
	if (t->errors >= GIVE_UP && !t->converted)
		t->stop = 1;
	return t->stop;
}

/* A word of 8 bytes that text of stamps is made of (digits, 0x, blanks, newlines): as
 * a counter, 10^17 ticks and more, years of uptime; as a tagged stamp, not one (bit 63
 * clear). Text given to --binary. */
static int text_word(const unsigned char *w)
{
	for (int i = 0; i < 8; i++)
		if (!strchr("0123456789abcdefABCDEFxX \t\r\n", w[i]) || !w[i])
			return 0;
	return 1;
}

static void summary(const struct tally *t, int binary, uint64_t n, uint64_t oldest,
		    uint64_t newest)
{
	const char *what = binary ? "words" : "lines";

	if (t->stop)
		fprintf(stderr, "faststamp convert: stopped after %" PRIu64 " %s (%" PRIu64 " errors, "
			"%" PRIu64 " converted): %s\n", n, what, t->errors, t->converted,
			binary ? t->text ? "the input looks like text: without --binary, a stamp a line"
				 : "no word is a stamp this history holds: another boot's, or not stamps?"
			       : t->binary ? "the input looks binary: little-endian 64-bit words want --binary"
				 : "no line is a stamp (decimal, or hexadecimal with 0x, one a line)");
	else if (t->errors > NAMED)
		fprintf(stderr, "faststamp convert: %" PRIu64 " errors in %" PRIu64 " %s, the first %d "
			"named\n", t->errors, n, what, NAMED);
	if (t->outside)
		fprintf(stderr, "faststamp convert: %" PRIu64 " of %" PRIu64 " stamps converted lie "
			"outside the history (counter %#" PRIx64 " to %#" PRIx64 ") and were "
			"extrapolated, marked 'extrapolated': their bounds hold if the clock kept its "
			"rate there and did not step\n", t->outside, t->converted, oldest, newest);
}

int fts_tool_convert(int argc, char **argv)
{
	const char *hist = NULL, *in = NULL;
	enum format f = F_NS;
	int binary = 0, bound = 0, clk = 0, outside;
	struct fts_calib *h;
	FILE *src = stdin;
	uint64_t n = 0, oldest, newest;
	struct tally t = { 0 };

	enum { OPT_HISTORY, OPT_IN, OPT_FORMAT, OPT_CLOCK, OPT_BINARY, OPT_BOUND, OPT_N };
	static const char *const names[OPT_N] = {
		[OPT_HISTORY] = "--history", [OPT_IN] = "--in", [OPT_FORMAT] = "--format",
		[OPT_CLOCK] = "--clock", [OPT_BINARY] = "--binary", [OPT_BOUND] = "--bound",
	};
	struct fts_tool_opts opts = FTS_TOOL_OPTS("convert", usage, names, OPT_BINARY);
	for (int i = 1; i < argc; i++) {
		const char *v;
		switch (fts_tool_opt(&opts, argc, argv, &i, &v)) {
		case OPT_HISTORY:
			hist = v;
			break;
		case OPT_IN:
			in = v;
			break;
		case OPT_FORMAT:
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
		case OPT_CLOCK:
			for (clk = 0; clk < FTS_TOOL_NCLK && strcmp(v, fts_tool_clock_arg[clk]); clk++)
				;
			if (clk == FTS_TOOL_NCLK)
				return fts_tool_usage_error("convert", usage, "unknown --clock '%s' "
							    "(realtime, tai, monotonic, boottime or raw)", v);
			break;
		case OPT_BINARY:
			binary = 1;
			break;
		case OPT_BOUND:
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
	if (fts_calib_range(h, &oldest, &newest) < 0) {   /* a loaded history has two */
		oldest = 0;
		newest = UINT64_MAX;
	}
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

		if (give_up(&t))
			break;
		if (binary) {
			unsigned char w[8];
			size_t got = fread(w, 1, sizeof(w), src);
			if (got == 0)
				break;
			n++;
			if (got < sizeof(w)) {
				problem(&t, binary, n, "%zu bytes, not 8 (the input ends inside it)", got);
				break;
			}
			if (text_word(w)) {
				char shown[4 * sizeof(w) + 1];
				t.text = 1;
				problem(&t, binary, n, "'%s' looks like text, not a little-endian word",
					fts_tool_clean(shown, sizeof(shown), (const char *)w, sizeof(w)));
				continue;
			}
			s = 0;
			for (int k = 7; k >= 0; k--)
				s = s << 8 | w[k];
		} else {
			if (!read_line(src, &line))
				break;
			n++;
			if (line.endless) {
				t.binary = t.stop = 1;
				problem(&t, binary, n, "no newline in %d bytes: not a text of stamps", LINE_TEXT);
				break;
			}
			why = line.longer ? "longer than 255 bytes, not a stamp"
			      : line.nul ? "holds a NUL byte, not a stamp"
					 : parse_stamp(line.b, line.len, &s);
			if (why) {
				char shown[4 * LINE_KEEP + 1];
				t.binary |= line.binary;
				problem(&t, binary, n, "'%s%s': %s",
					fts_tool_clean(shown, sizeof(shown), line.b, line.len),
					line.longer ? "..." : "", why);
				continue;
			}
		}
		if (convert(h, clk, s, &ns, &err) < 0) {
			int e = errno;
			problem(&t, binary, n, "stamp %#" PRIx64 ": %s%s", s,
				e == ENOTSUP ? "a CLOCK_REALTIME reading (bit 63), not convertible to "
				: e == ERANGE ? "beyond the history's reach (further from its samples "
						"than they span, and 1 s) or past 64 bits of ns: a stamp "
						"of another boot or history?"
					      : strerror(e),
				e == ENOTSUP ? fts_tool_clock_name[clk] : "");
			continue;
		}
		t.converted++;
		outside = !(s & FTS_STAMP_CLOCK_TAG) && (s < oldest || s > newest);
		t.outside += outside;
		print_time(clk, ns, err, f, bound, outside);
	}
	if (ferror(src)) {
		fprintf(stderr, "faststamp convert: reading %s: %s\n", in ? in : "standard input",
			strerror(errno));
		t.errors++;
	}
	if (src != stdin)
		fclose(src);
	fts_calib_free(h);
	summary(&t, binary, n, oldest, newest);
	return t.errors != 0;
}
