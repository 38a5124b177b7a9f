/* trace_ctf.c - `faststamp trace --format ctf`: the events as a CTF 1.8 trace that
 * babeltrace2 and Trace Compass read: a TSDL metadata text and a stream file a thread,
 * one packet each, timestamps in ns on the chosen clock. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faststamp.h"
#include "tool.h"

#define CTF_MAGIC 0xc1fc1fc1u
/* bytes: packet header (magic, stream id, stream instance id) and context (begin, end,
 * content size, packet size, events discarded) */
#define PACKET_HEAD 16
#define PACKET_CTX 40

struct buf {
	unsigned char *p;
	size_t n, cap;
	int failed;
};

static void put(struct buf *b, uint64_t v, int bytes)
{
	if (b->n + (size_t)bytes > b->cap) {
		size_t c = b->cap ? b->cap * 2 : 65536;
		unsigned char *p = realloc(b->p, c);
		if (!p) {
			b->failed = 1;
			return;
		}
		b->p = p;
		b->cap = c;
	}
	for (int i = 0; i < bytes; i++)
		b->p[b->n++] = (unsigned char)(v >> 8 * i);
}

static void set64(struct buf *b, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b->p[at + (size_t)i] = (unsigned char)(v >> 8 * i);
}

/* An event's class: its type and the fields it was given (the first nfields of its
 * type's), so that a field not given is absent, as in the text and the JSON. */
#define CLASS(e) ((e)->type * (FTS_EVENT_MAX_FIELDS + 1) + (int)(e)->nfields)

/* The metadata: one event class a type and field count seen (its fields with a leading
 * underscore, which CTF readers drop, so that no field name is taken for a TSDL
 * keyword). */
static int write_metadata(FILE *f, struct fts_trace_event *const *ev, size_t n,
			  const char *clock, int absolute, int pid)
{
	unsigned char seen[FTS_EVENT_TYPES_MAX * (FTS_EVENT_MAX_FIELDS + 1)] = { 0 };

	fprintf(f, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n"
		"\t\tuint64_t stream_instance_id;\n\t};\n};\n\n"
		"env {\n\ttracer_name = \"faststamp\";\n\tdomain = \"ust\";\n\tvpid = %d;\n};\n\n"
		"clock {\n\tname = \"%s\";\n\tdescription = \"faststamp: what the clock read at "
		"each stamp, converted from the trace's history\";\n\tfreq = 1000000000;\n"
		"\toffset_s = 0;\n\toffset = 0;\n\tabsolute = %s;\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; map = clock.%s.value; } "
		":= uint64_clock_t;\n\n"
		"enum kind : uint8_t { instant = 0, begin = 1, end = 2 };\n\n"
		"stream {\n\tid = 0;\n"
		"\tpacket.context := struct {\n\t\tuint64_clock_t timestamp_begin;\n"
		"\t\tuint64_clock_t timestamp_end;\n\t\tuint64_t content_size;\n"
		"\t\tuint64_t packet_size;\n\t\tuint64_t events_discarded;\n\t};\n"
		"\tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n\t};\n"
		"\tevent.context := struct {\n\t\tuint32_t _tid;\n\t\tenum kind _kind;\n"
		"\t\tint64_t _bound_ns;\n\t};\n};\n",
		pid, clock, absolute ? "true" : "false", clock);
	for (size_t i = 0; i < n; i++) {
		const struct fts_trace_event *e = ev[i];
		if (seen[CLASS(e)])
			continue;
		seen[CLASS(e)] = 1;
		/* names hold no '"' or '\' (fts_event_define) */
		fprintf(f, "\nevent {\n\tname = \"%s\";\n\tid = %d;\n\tstream_id = 0;\n"
			"\tfields := struct {\n", e->name, CLASS(e));
		for (unsigned k = 0; k < e->nfields && e->field_names[k]; k++)
			fprintf(f, "\t\tuint64_t _%s;\n", e->field_names[k]);
		fprintf(f, "\t};\n};\n");
	}
	return ferror(f) ? -1 : 0;
}

/* One thread's events (in time order) as one packet. */
static int write_stream(const char *dir, uint32_t tid, struct fts_trace_event *const *ev,
			size_t n, uint64_t dropped)
{
	struct buf b = { 0 };
	char path[4096];
	size_t ctx;
	int fd, rc = 0;

	put(&b, CTF_MAGIC, 4);
	put(&b, 0, 4);
	put(&b, tid, 8);
	ctx = b.n;
	for (int i = 0; i < 5; i++)
		put(&b, 0, 8);
	for (size_t i = 0; i < n; i++) {
		const struct fts_trace_event *e = ev[i];
		unsigned nf = 0;
		while (nf < e->nfields && e->field_names[nf])
			nf++;
		put(&b, (uint64_t)CLASS(e), 4);
		put(&b, (uint64_t)e->ns, 8);
		put(&b, e->tid, 4);
		put(&b, (uint64_t)e->kind, 1);
		put(&b, (uint64_t)e->err_ns, 8);
		for (unsigned k = 0; k < nf; k++)
			put(&b, e->fields[k], 8);   /* those given: its class's */
	}
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	set64(&b, ctx, n ? (uint64_t)ev[0]->ns : 0);
	set64(&b, ctx + 8, n ? (uint64_t)ev[n - 1]->ns : 0);
	set64(&b, ctx + 16, (uint64_t)b.n * 8);
	set64(&b, ctx + 24, (uint64_t)b.n * 8);
	set64(&b, ctx + 32, dropped);
	snprintf(path, sizeof(path), "%s/stream_%" PRIu32, dir, tid);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		rc = -errno;
	} else {
		for (size_t at = 0; at < b.n && !rc;) {
			ssize_t w = write(fd, b.p + at, b.n - at);
			if (w < 0 && errno != EINTR)
				rc = -errno;
			else if (w > 0)
				at += (size_t)w;
		}
		if (close(fd) < 0 && !rc)
			rc = -errno;
	}
	free(b.p);
	return rc;
}

static int by_tid(const void *a, const void *b)
{
	const struct fts_trace_event *x = *(struct fts_trace_event *const *)a,
				     *y = *(struct fts_trace_event *const *)b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	/* in time order within a thread; the array came in time order, ties kept */
	return x->ns < y->ns ? -1 : x->ns > y->ns ? 1 : (x < y ? -1 : x > y);
}

/* A directory that exists, given with --force: emptied of a CTF trace (metadata,
 * stream_*) if that is all it holds; anything else in it, and it is left alone. 0 or
 * negative errno (-ENOTEMPTY: other files). */
static int empty_ctf_dir(const char *dir)
{
	char path[4096];
	struct dirent *d;
	DIR *dp = opendir(dir);
	int rc = 0, pass;

	if (!dp)
		return -errno;
	for (pass = 0; pass < 2 && !rc; pass++, rewinddir(dp))
		while ((d = readdir(dp)) && !rc) {
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (strcmp(d->d_name, "metadata") && strncmp(d->d_name, "stream_", 7))
				rc = -ENOTEMPTY;   /* not a CTF trace of ours: nothing removed */
			else if (pass == 1 && (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name),
					       unlink(path) < 0))
				rc = -errno;
		}
	closedir(dp);
	return rc;
}

int fts_tool_trace_ctf(const char *dir, struct fts_trace_event **ev, size_t n,
		       const char *clock, int absolute, int pid, uint64_t dropped, int force)
{
	char path[4096];
	FILE *f;
	int rc;

	if (force && (rc = empty_ctf_dir(dir)) != -ENOENT) {
		if (rc < 0) {
			fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(dir),
				rc == -ENOTEMPTY ? "holds files of no CTF trace: not replaced"
						 : strerror(-rc));
			return -1;
		}
	} else if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "faststamp trace: %s: %s (a new directory for the CTF trace)\n",
			FTS_TOOL_CLEAN(dir), strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (!(f = fopen(path, "wx"))) {
		fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(path), strerror(errno));
		return -1;
	}
	rc = write_metadata(f, ev, n, clock, absolute, pid);
	if (fclose(f) == EOF || rc < 0) {
		fprintf(stderr, "faststamp trace: %s: %s\n", FTS_TOOL_CLEAN(path), strerror(errno));
		return -1;
	}
	qsort(ev, n, sizeof(*ev), by_tid);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && ev[j]->tid == ev[i]->tid; j++)
			;
		/* the drops are the trace's, not a thread's: told once, in the first stream */
		if ((rc = write_stream(dir, ev[i]->tid, ev + i, j - i, i ? 0 : dropped)) < 0) {
			fprintf(stderr, "faststamp trace: %s: stream of thread %" PRIu32 ": %s\n",
				FTS_TOOL_CLEAN(dir), ev[i]->tid, strerror(-rc));
			return -1;
		}
	}
	return 0;
}
