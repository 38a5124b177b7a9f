/* shared.c - the machine's shared history file: the publisher's side and the
 * readers' checks (see shared.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "faststamp/config.h"
#include "internal.h"
#include "shared.h"

#define MAX_DIRCAP (1u << 24)   /* 160 GiB of chunks: more is not a history */

static void say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ---- the publisher ------------------------------------------------------------------- */

/* The directory of path: ours, a directory, and writable by no one else. */
static int check_dir(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (lstat(dir, &st) < 0) {
		say(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		say(err, errlen, "%s: %s", dir, "not a directory (a symbolic link is not taken)");
		return -1;
	}
	if (st.st_uid != geteuid()) {
		say(err, errlen, "%s: %s", dir, "not owned by this user");
		return -1;
	}
	if (st.st_mode & 022) {
		say(err, errlen, "%s: %s", dir, "writable by its group or others");
		return -1;
	}
	return 0;
}

int fts__publisher_open(struct fts__publisher *p, const char *path, const struct fts__head *id,
			uint64_t interval_ns, uint32_t dircap, size_t region_len, void **region,
			char *err, size_t errlen)
{
	char lock[4200];
	int fd;

	memset(p, 0, sizeof(*p));
	p->lockfd = -1;
	if (!path || !*path || strlen(path) >= sizeof(p->path) - 32) {
		say(err, errlen, "the path is empty or too long");
		return -1;
	}
	snprintf(p->path, sizeof(p->path), "%s", path);
	if (check_dir(path, err, errlen) < 0)
		return -1;
	snprintf(lock, sizeof(lock), "%s.lock", path);
	p->lockfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (p->lockfd < 0) {
		say(err, errlen, "%s: %s", lock, strerror(errno));
		return -1;
	}
	if (flock(p->lockfd, LOCK_EX | LOCK_NB) < 0) {
		say(err, errlen, "%s: %s", path, errno == EWOULDBLOCK ?
		    "another faststamp serve publishes here" : strerror(errno));
		goto fail;
	}
	snprintf(p->tmp, sizeof(p->tmp), "%s.new.%ld", path, (long)getpid());
	unlink(p->tmp);   /* a leftover of a publisher that had our pid */
	fd = open(p->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		say(err, errlen, "%s: %s", p->tmp, strerror(errno));
		goto fail;
	}
	p->len = FTS__SHM_HEAD + region_len;
	if (fchmod(fd, 0644) < 0 || ftruncate(fd, (off_t)p->len) < 0 ||
	    (p->map = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		say(err, errlen, "%s: %s", p->tmp, strerror(errno));
		p->map = NULL;
		close(fd);
		unlink(p->tmp);
		goto fail;
	}
	close(fd);
	p->head = p->map;
	*p->head = (struct fts__shm_head){ .version = FTS__SHM_VERSION, .head_bytes = FTS__SHM_HEAD,
					  .dircap = dircap, .kind = id->kind, .region_len = region_len,
					  .counter_hz = id->counter_hz, .interval_ns = interval_ns,
					  .pid = (int32_t)getpid(), .state = FTS__SHM_RUNNING };
	memcpy(p->head->magic, FTS__SHM_MAGIC, 8);
	memcpy(p->head->boot_id, id->boot_id, 16);
	snprintf(p->head->clocksource, sizeof(p->head->clocksource), "%s", id->clocksource);
	fts__now(CLOCK_REALTIME, &p->head->started_ns);
	*region = (char *)p->map + FTS__SHM_HEAD;
	return 0;
fail:
	close(p->lockfd);
	p->lockfd = -1;
	return -1;
}

void fts__publisher_proof(struct fts__publisher *p, const cpu_set_t *cpus, int64_t skew_ns)
{
	p->head->proof = cpus ? FTS__SHM_PROOF_PROVEN : FTS__SHM_PROOF_NOT_NEEDED;
	p->head->skew_ns = skew_ns;
	memset(p->head->proof_cpus, 0, sizeof(p->head->proof_cpus));
	for (int c = 0; cpus && c < (int)sizeof(p->head->proof_cpus) * 8 && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus))
			p->head->proof_cpus[c / 8] |= (uint8_t)(1u << (c % 8));
}

int fts__publisher_show(struct fts__publisher *p, char *err, size_t errlen)
{
	if (rename(p->tmp, p->path) < 0) {
		say(err, errlen, "%s: %s", p->path, strerror(errno));
		return -1;
	}
	p->tmp[0] = '\0';
	return 0;
}

void fts__publisher_beat(struct fts__publisher *p, uint64_t counter)
{
	if (p->head)
		__atomic_store_n(&p->head->beat, counter, __ATOMIC_RELEASE);
}

void fts__publisher_close(struct fts__publisher *p, uint32_t state, const char *why)
{
	if (p->head) {
		snprintf(p->head->why, sizeof(p->head->why), "%s", why ? why : "");
		__atomic_store_n(&p->head->state, state, __ATOMIC_RELEASE);
		msync(p->map, FTS__SHM_HEAD, MS_ASYNC);
	}
	if (p->tmp[0])
		unlink(p->tmp);
	if (p->lockfd >= 0)
		close(p->lockfd);
	p->lockfd = -1;
	p->head = NULL;
}

/* ---- readers ---------------------------------------------------------------------- */

int fts__shared_check(const struct fts__shm_head *h, size_t size, char *why, size_t len)
{
	size_t d0, d1, pool;

	if (size < FTS__SHM_HEAD || memcmp(h->magic, FTS__SHM_MAGIC, 8)) {
		say(why, len, "not a faststamp shared history");
		return -1;
	}
	if (h->version != FTS__SHM_VERSION || h->head_bytes != FTS__SHM_HEAD) {
		say(why, len, "a version of the shared history this library does not read");
		return -1;
	}
	if (h->dircap == 0 || h->dircap > MAX_DIRCAP ||
	    h->region_len != fts__region_layout(h->dircap, &d0, &d1, &pool) ||
	    size - FTS__SHM_HEAD < h->region_len) {
		say(why, len, "its geometry does not match its size (truncated?)");
		return -1;
	}
	return 0;
}

void fts__shared_view(struct fts_calib *c, void *map, const struct fts__shm_head *h)
{
	memset(c, 0, sizeof(*c));
	fts__calib_layout(c, (char *)map + FTS__SHM_HEAD, h->dircap);
	c->flags_ok = FTS__SEG_STEP;   /* the fast path's flag is the writer's claim */
	c->bounded = 1;
}

/* Is uid one a reader may trust: root, the reader's own, or the service's user? */
static int trusted_owner(uid_t uid)
{
	struct passwd pw, *r = NULL;
	char buf[1024];

	if (uid == 0 || uid == geteuid())
		return 1;
	return getpwnam_r(FTS_SERVICE_USER, &pw, buf, sizeof(buf), &r) == 0 && r && r->pw_uid == uid;
}

/* Is every CPU of need among those the publisher proved the counter on? */
static int proven_on(const struct fts__shm_head *h, const cpu_set_t *need, char *why, size_t len)
{
	if (!need)
		return 1;
	if (h->proof != FTS__SHM_PROOF_PROVEN || h->skew_ns < 0) {
		say(why, len, "its publisher did not prove the counter across CPUs");
		return 0;
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, need) &&
		    (c >= (int)sizeof(h->proof_cpus) * 8 || !(h->proof_cpus[c / 8] >> (c % 8) & 1))) {
			say(why, len, "its publisher did not prove the counter on CPU %d", c);
			return 0;
		}
	return 1;
}

int fts__shared_attach(struct fts__shared *s, const char *path, const struct fts__head *id,
		       const cpu_set_t *need, uint64_t counter_now, char *why, size_t len)
{
	struct stat st;
	void *map = MAP_FAILED;
	const struct fts__shm_head *h;
	char b[64];
	int fd;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		say(why, len, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		say(why, len, "not a regular file");
		goto fail;
	}
	if (st.st_mode & 022) {
		say(why, len, "writable by its group or others");
		goto fail;
	}
	if (!trusted_owner(st.st_uid)) {
		say(why, len, "owned by uid %lu, not root, this user or %s", (unsigned long)st.st_uid,
		    FTS_SERVICE_USER);
		goto fail;
	}
	if ((size_t)st.st_size < FTS__SHM_HEAD) {
		say(why, len, "not a faststamp shared history (too short)");
		goto fail;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		say(why, len, "%s", strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	h = map;
	if (fts__shared_check(h, (size_t)st.st_size, why, len) < 0)
		goto fail;
	if (memcmp(h->boot_id, id->boot_id, 16)) {
		say(why, len, "it is of another boot");
		goto fail;
	}
	if (h->kind != id->kind || h->counter_hz == 0) {
		say(why, len, "it is of another counter");
		goto fail;
	}
	if (strncmp(h->clocksource, id->clocksource, sizeof(h->clocksource))) {
		snprintf(b, sizeof(b), "%.31s", h->clocksource);
		say(why, len, "its clocksource is %s, this process's %s", b, id->clocksource);
		goto fail;
	}
	if (!proven_on(h, need, why, len))
		goto fail;
	s->head = h;
	s->stale_ticks = (uint64_t)((unsigned __int128)h->counter_hz * FTS__SHM_STALE_NS / 1000000000);
	if (!fts__shared_alive(s, counter_now, why, len))
		goto fail;
	fts__shared_view(&s->viewbuf, map, h);
	s->view = &s->viewbuf;
	if (fts_calib_count(s->view) < 2) {
		say(why, len, "it holds no history yet");
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	memset(s, 0, sizeof(*s));
	return -1;
}

int fts__shared_alive(const struct fts__shared *s, uint64_t now, char *why, size_t len)
{
	uint32_t state = __atomic_load_n(&s->head->state, __ATOMIC_ACQUIRE);
	uint64_t beat = __atomic_load_n(&s->head->beat, __ATOMIC_ACQUIRE);
	char w[161];

	if (state != FTS__SHM_RUNNING) {
		snprintf(w, sizeof(w), "%.160s", s->head->why);
		say(why, len, "its publisher stopped%s%s", state == FTS__SHM_FAULTED ? ": " : "",
		    state == FTS__SHM_FAULTED ? w : "");
		return 0;
	}
	if (now > beat && now - beat > s->stale_ticks) {
		say(why, len, "its heartbeat is over 1 s old");
		return 0;
	}
	return 1;
}
