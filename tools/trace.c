/* faststamp trace - a trace file (fts_trace_start) as text, or as the Chrome Trace
 * Event Format (JSON) that Perfetto's UI and chrome://tracing open, on a clock of the
 * user's choice. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "faststamp.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp trace FILE [--clock realtime|tai|monotonic|boottime|raw]\n"
	"                       [--format text|json|ctf|perfetto] [--out PATH [--force]]\n"
	"  Print the events of a trace file (fts_trace_start), each at what the clock read\n"
	"  when it was stored, from the history the file holds.\n"
	"  --clock C    CLOCK_REALTIME (the default), CLOCK_TAI, CLOCK_MONOTONIC,\n"
	"               CLOCK_BOOTTIME or CLOCK_MONOTONIC_RAW\n"
	"  --format F   text (the default): one line an event, in time order: SEC.NSEC\n"
	"               on the clock, +-BOUND ns, tid, name, kind (instant, begin, end;\n"
	"               end-unpaired: an end no begin in the file opened),\n"
	"               field=value...; json: the Chrome Trace Event Format (ts and dur in\n"
	"               us with three decimals, ts from otherData's origin_ns, a whole\n"
	"               second on the clock, so that a double holds every ns; a span as\n"
	"               one event of ph X, or B/E when its other end is not in the file);\n"
	"               ctf: a CTF 1.8 trace (babeltrace2, Trace Compass) in the new\n"
	"               directory --out: ns on the clock, a stream a thread; perfetto:\n"
	"               Perfetto's own protobuf trace in the file --out, ns on the clock\n"
	"               (no TAI), a track a thread, fields as debug annotations\n"
	"  --out PATH   write there (default: standard output; ctf: required); never the\n"
	"               trace itself, and not a file or directory that exists unless\n"
	"  --force      is given (a CTF directory is then emptied of its trace first)\n"
	"Exit 0 when every event converted, 1 when some did not, the file is damaged\n"
	"(each damaged block passed over, said with its offset; every whole block before\n"
	"and after printed; a damaged history: counters instead of times) or holds no\n"
	"event and was not stopped, 2 on a usage error.\n";

struct ev {
	struct fts_trace_event e;
	uint64_t seq;
	int64_t dur;           /* a begin paired with its end: the span, ns */
	int paired;            /* 1: a begin with its end; 2: an end merged into its begin */
	int counter;           /* no time (the file's history damaged): its counter alone */
};

static int by_time(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->e.ns != y->e.ns)
		return x->e.ns < y->e.ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *const kinds[] = { "instant", "begin", "end" };

/* ns as SEC.NSEC (text) or us with three decimals (json), sign first. */
static void print_fixed(FILE *o, int64_t ns, int64_t unit, int digits)
{
	uint64_t m = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(o, "%s%" PRIu64 ".%0*" PRIu64, ns < 0 ? "-" : "", m / (uint64_t)unit, digits,
		m % (uint64_t)unit);
}

static void print_text(FILE *o, const struct ev *v)
{
	const struct fts_trace_event *e = &v->e;

	if (v->counter)
		fprintf(o, "counter:%#" PRIx64 " +-?", e->stamp);
	else
		print_fixed(o, e->ns, 1000000000, 9);
	if (!v->counter)
		fprintf(o, " +-%" PRId64 "", e->err_ns);
	/* an end no begin in the file opened (fts_span_end alone, or its begin lost) */
	fprintf(o, " %" PRIu32 " %s %s", e->tid, e->name,
		e->kind == FTS_EVENT_END && !v->paired ? "end-unpaired" : kinds[e->kind]);
	for (unsigned k = 0; k < e->nfields; k++)
		fprintf(o, " %s=%" PRIu64, e->field_names[k] ? e->field_names[k] : "?", e->fields[k]);
	fputc('\n', o);
}

static void print_json(FILE *o, const struct ev *v, const struct ev *end, int pid, int first,
		       int64_t origin)
{
	const struct fts_trace_event *e = &v->e;
	const char *ph = e->kind == FTS_EVENT_INSTANT ? "i" : v->paired ? "X"
			 : e->kind == FTS_EVENT_BEGIN ? "B" : "E";
	int n = 0;

	/* names and field names hold no '"' or '\' (fts_event_define) */
	fprintf(o, "%s\n{\"name\":\"%s\",\"ph\":\"%s\",\"ts\":", first ? "" : ",", e->name, ph);
	print_fixed(o, e->ns - origin, 1000, 3);
	if (v->paired) {
		fputs(",\"dur\":", o);
		print_fixed(o, v->dur, 1000, 3);
	}
	if (e->kind == FTS_EVENT_INSTANT)
		fputs(",\"s\":\"t\"", o);
	if (e->kind == FTS_EVENT_END && !v->paired)
		fputs(",\"cat\":\"unpaired\"", o);
	fprintf(o, ",\"pid\":%d,\"tid\":%" PRIu32 ",\"args\":{", pid, e->tid);
	for (unsigned k = 0; k < e->nfields; k++)
		fprintf(o, "%s\"%s\":%" PRIu64, n++ ? "," : "", e->field_names[k], e->fields[k]);
	for (unsigned k = 0; end && k < end->e.nfields; k++)
		fprintf(o, "%s\"end_%s\":%" PRIu64, n++ ? "," : "", end->e.field_names[k],
			end->e.fields[k]);
	fputs("}}", o);
}

/* Whether --out may be written: never the trace itself (the same file, by any name),
 * and a regular file or a directory that exists only with --force (ctf: a directory;
 * else a file). A device or a pipe is written to. */
static int out_allowed(const char *in, const char *out, int force, int ctf)
{
	struct stat si, so;
	const char *why = NULL;

	if (stat(out, &so) < 0)
		return 1;
	if (stat(in, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
		why = "the trace itself: never written over";
	else if (!S_ISREG(so.st_mode) && !S_ISDIR(so.st_mode))
		return 1;
	else if (!force)
		why = "exists (--force to replace it)";
	else if (!S_ISDIR(so.st_mode) != !ctf)
		why = ctf ? "exists and is not a directory" : "is a directory";
	if (why)
		fprintf(stderr, "faststamp trace: --out %s: %s\n", FTS_TOOL_CLEAN(out), why);
	return !why;
}

int fts_tool_trace(int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	int clk = 0, json = 0, ctf = 0, perfetto = 0, bad = 0, rc, force = 0;
	size_t counters = 0;
	struct fts_trace *t;
	struct fts_trace_stats st = { .size = sizeof(st) };
	struct ev *v = NULL;
	size_t n = 0, cap = 0, *open_ = NULL, nopen = 0;
	FILE *o = stdout;
	enum { OPT_CLOCK, OPT_FORMAT, OPT_OUT, OPT_FORCE, OPT_N };
	static const char *const names[OPT_N] = {
		[OPT_CLOCK] = "--clock", [OPT_FORMAT] = "--format", [OPT_OUT] = "--out",
		[OPT_FORCE] = "--force",
	};
	struct fts_tool_opts opts = FTS_TOOL_OPTS("trace", usage, names, OPT_FORCE);

	for (int i = 1; i < argc; i++) {
		const char *val;
		switch (fts_tool_opt(&opts, argc, argv, &i, &val)) {
		case OPT_CLOCK:
			for (clk = 0; clk < FTS_TOOL_NCLK && strcmp(val, fts_tool_clock_arg[clk]); clk++)
				;
			if (clk == FTS_TOOL_NCLK)
				return fts_tool_usage_error("trace", usage, "unknown --clock '%s' "
							    "(realtime, tai, monotonic, boottime or raw)", val);
			break;
		case OPT_FORMAT:
			if (!strcmp(val, "json"))
				json = 1;
			else if (!strcmp(val, "ctf"))
				ctf = 1;
			else if (!strcmp(val, "perfetto"))
				perfetto = 1;
			else if (strcmp(val, "text"))
				return fts_tool_usage_error("trace", usage, "unknown --format '%s' "
							    "(text, json, ctf or perfetto)", val);
			break;
		case OPT_OUT:
			out = val;
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case FTS_OPT_ARG:
			if (path)
				return fts_tool_usage_error("trace", usage, "unexpected argument '%s'", val);
			path = val;
			break;
		case FTS_OPT_END:
			break;
		case FTS_OPT_HELP:
			return 0;
		default:
			return 2;
		}
	}
	if (!path)
		return fts_tool_usage_error("trace", usage, "%s", "a trace FILE is required");
	if (ctf && !out)
		return fts_tool_usage_error("trace", usage, "%s", "--format ctf needs --out DIR");
	if (perfetto && !out)
		return fts_tool_usage_error("trace", usage, "%s", "--format perfetto needs --out FILE");
	/* Perfetto's clocks: REALTIME 1, MONOTONIC 3, MONOTONIC_RAW 5, BOOTTIME 6; no TAI */
	if (perfetto && clk == 1)
		return fts_tool_usage_error("trace", usage, "%s", "--format perfetto has no TAI clock "
					    "(realtime, monotonic, boottime or raw)");
	if (force && !out)
		return fts_tool_usage_error("trace", usage, "%s", "--force goes with --out");
	if (out && !out_allowed(path, out, force, ctf))
		return 1;
	{
		static const clockid_t ids[FTS_TOOL_NCLK] = { CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC,
							       CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW };
		if (!(t = fts_trace_open(path, ids[clk]))) {
			fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(path),
				errno == EBADMSG ? "not a trace (its header is not one), or without "
						   "that clock's history"
				: errno == ENODATA ? "empty, or cut before its first whole block: no trace in it"
				: errno == EISDIR ? "is a directory, not a trace file"
				: errno == ESPIPE ? "a pipe: a trace is read from a file" : strerror(errno));
			return 1;
		}
	}
	for (;;) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 4096;
			struct ev *nv = realloc(v, c * sizeof(*v));
			size_t *no = realloc(open_, c * sizeof(*open_));
			if (nv)
				v = nv;
			if (no)
				open_ = no;
			if (!nv || !no) {
				fprintf(stderr, "faststamp trace: %s\n", strerror(ENOMEM));
				bad = 1;
				break;
			}
			cap = c;
		}
		memset(&v[n], 0, sizeof(v[n]));
		if ((rc = fts_trace_next(t, &v[n].e)) < 0 && errno == EBADMSG) {
			fts_trace_summary(t, &st);
			fprintf(stderr, "faststamp trace: %s: a damaged block at byte %" PRIu64
				", passed over: reading goes on at byte %" PRIu64 "\n",
				FTS_TOOL_CLEAN(path), st.damage_at, st.damage_end);
			bad = 1;
			continue;
		}
		if (rc <= 0) {
			if (rc < 0) {
				fprintf(stderr, "faststamp trace: %s: after %zu events: %s\n",
					FTS_TOOL_CLEAN(path), n, strerror(errno));
				bad = 1;
			}
			break;
		}
		if (v[n].e.error == EBADMSG) {
			/* no history to give a time: text prints the counter, in the file's order */
			counters++;
			bad = 1;
			if (!json && !ctf && !perfetto) {
				v[n].counter = 1;
				v[n].seq = n;
				n++;
			}
			continue;
		}
		if (v[n].e.error) {
			fprintf(stderr, "faststamp trace: event %zu (%s, stamp %#" PRIx64 "): not "
				"converted to %s: %s\n", n + 1, v[n].e.name, v[n].e.stamp,
				fts_tool_clock_name[clk], strerror(v[n].e.error));
			bad = 1;
			continue;
		}
		v[n].seq = n;
		/* an end closes the latest open begin of its type in its thread */
		if (v[n].e.kind == FTS_EVENT_BEGIN) {
			open_[nopen++] = n;
		} else if (v[n].e.kind == FTS_EVENT_END) {
			for (size_t j = nopen; j-- > 0;) {
				struct ev *b = &v[open_[j]];
				if (b->e.tid == v[n].e.tid && b->e.type == v[n].e.type) {
					b->paired = 1;
					b->dur = v[n].e.ns - b->e.ns;
					v[n].paired = 2;
					memmove(open_ + j, open_ + j + 1, (nopen - j - 1) * sizeof(*open_));
					nopen--;
					break;
				}
			}
		}
		n++;
	}
	fts_trace_summary(t, &st);
	if (counters)
		fprintf(stderr, "faststamp trace: %s: the file's history was in a damaged block: "
			"%zu events have no time on %s; %s\n", FTS_TOOL_CLEAN(path), counters,
			fts_tool_clock_name[clk], json || ctf || perfetto ? "left out (the text format prints "
			"their counters)" : "each printed with its counter (counter:0x...)");
	if (ctf) {
		struct fts_trace_event **p = malloc((n ? n : 1) * sizeof(*p));
		qsort(v, n, sizeof(*v), by_time);
		for (size_t i = 0; p && i < n; i++)
			p[i] = &v[i].e;
		if (!p || fts_tool_trace_ctf(out, p, n, fts_tool_clock_arg[clk], clk <= 1,
					     fts_trace_pid(t), st.dropped, force) < 0)
			bad = 1;
		free(p);
		o = NULL;
		out = NULL;
	} else if (out && !(o = fopen(out, "w"))) {
		fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(out), strerror(errno));
		bad = 1;
		o = NULL;
	}
	if (o && perfetto) {
		static const unsigned ids[FTS_TOOL_NCLK] = { 1, 0, 3, 6, 5 };
		struct fts_trace_event **p = malloc((n ? n : 1) * sizeof(*p));
		qsort(v, n, sizeof(*v), by_time);
		for (size_t i = 0; p && i < n; i++)
			p[i] = &v[i].e;
		if (!p || fts_tool_trace_perfetto(o, p, n, ids[clk], fts_trace_pid(t)) < 0) {
			fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(out),
				p ? strerror(errno) : strerror(ENOMEM));
			bad = 1;
		}
		free(p);
	} else if (o && json) {
		int first = 1;
		/* times from a whole second before the first event: a double holds every ns of
		 * 52 days from there, where it holds a quarter of a us on REALTIME's scale */
		int64_t origin = INT64_MAX;
		for (size_t i = 0; i < n; i++)
			origin = v[i].e.ns < origin ? v[i].e.ns : origin;
		origin = n ? origin / 1000000000 - (origin % 1000000000 < 0) : 0;
		fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", o);
		for (size_t i = 0; i < n; i++) {
			const struct ev *end = NULL;
			if (v[i].paired == 2)
				continue;
			/* the end merged into a begin, for its fields */
			for (size_t j = i + 1; v[i].paired == 1 && j < n && !end; j++)
				if (v[j].paired == 2 && v[j].e.tid == v[i].e.tid &&
				    v[j].e.type == v[i].e.type && v[j].e.ns - v[i].e.ns == v[i].dur)
					end = &v[j];
			print_json(o, &v[i], end, fts_trace_pid(t), first, origin * 1000000000);
			first = 0;
		}
		fprintf(o, "\n],\"otherData\":{\"clock\":\"%s\",\"origin_s\":%" PRId64 ",\"origin_ns\":\"%"
			PRId64 "\",\"events\":\"%" PRIu64 "\",\"dropped\":\"%" PRIu64 "\",\"lost\":\"%"
			PRIu64 "\"}}\n", fts_tool_clock_name[clk], origin, origin * 1000000000, st.events, st.dropped,
			st.lost);
	} else if (o) {
		qsort(v, n, sizeof(*v), by_time);
		for (size_t i = 0; i < n; i++)
			print_text(o, &v[i]);
	}
	if (st.damaged)
		fprintf(stderr, "faststamp trace: %s: %" PRIu64 " damaged block%s passed over; every "
			"whole block read\n", FTS_TOOL_CLEAN(path), st.damaged, st.damaged == 1 ? "" : "s");
	if (!st.stopped && !st.events) {
		fprintf(stderr, "faststamp trace: %s: no event in it, and the trace was not stopped\n",
			FTS_TOOL_CLEAN(path));
		bad = 1;
	}
	if (st.dropped || st.lost || !st.stopped)
		fprintf(stderr, "faststamp trace: %" PRIu64 " events, %" PRIu64 " dropped by full rings, %"
			PRIu64 " lost by the writer's drain%s\n", st.events, st.dropped, st.lost,
			st.stopped ? "" : "; the trace was not stopped (killed, or cut short): "
					  "every whole block read");
	if (o && o != stdout && fclose(o) == EOF) {
		fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(out), strerror(errno));
		bad = 1;
	}
	fts_trace_close(t);
	free(v);
	free(open_);
	return bad;
}
