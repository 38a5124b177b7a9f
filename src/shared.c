/* shared.c - the machine's shared history: the publisher's sealed memory and the
 * socket that hands it out, and the readers' checks (see shared.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "faststamp/config.h"
#include "internal.h"
#include "shared.h"
#include "calib.h"
#include "clock.h"
#include "histfile.h"
#include "history.h"
#include "now.h"
#include "sysfs.h"

#define MAX_DIRCAP (1u << 24)   /* 160 GiB of chunks: more is not a history */

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010   /* Linux 5.1's value, for older headers */
#endif
/* What the publisher seals its memory with, and a reader requires (shared.h). */
#define FTS__SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE)

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

/* One directory on the way to the path (ours: the path's own directory): 0, or -1
 * with what is wrong in err. */
static int check_one_dir(const char *dir, int ours, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		say(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		say(err, errlen, "%s: %s", dir, "not a directory (a symbolic link is not taken)");
		return -1;
	}
	if (ours ? st.st_uid != geteuid() : st.st_uid != 0 && st.st_uid != geteuid()) {
		say(err, errlen, "%s: owned by uid %lu, not %s (who owns a directory may replace "
		    "what is in it)", dir, (unsigned long)st.st_uid, ours ? "this user" :
		    "root or this user");
		return -1;
	}
	if (st.st_mode & 022 && (ours || !(st.st_mode & S_ISVTX))) {
		say(err, errlen, "%s: writable by its group or others%s", dir, ours ? "" :
		    ", and not sticky");
		return -1;
	}
	return 0;
}

/* Every directory the path (absolute, no symbolic link on the way: realpath's) goes
 * through, as ssh's StrictModes has them: its own directory this user's and writable
 * by no one else; each one above it, up to /, owned by root or this user and writable
 * by no group or other unless it is sticky (as /tmp, where no one else may rename or
 * remove what is ours). Whoever could write one of them could put another directory,
 * and another socket, in our path's place. */
static int check_dir(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (int ours = 1; (slash = strrchr(dir, '/')); ours = 0) {
		slash[slash == dir] = '\0';   /* "/x" -> "/" */
		if (check_one_dir(dir, ours, err, errlen) < 0)
			return -1;
		if (slash == dir)
			return 0;
	}
	return 0;
}

/* What is at path now, in words, for a note. */
static const char *what_is(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? "a regular file" : S_ISLNK(st->st_mode) ? "a symbolic link" :
	       S_ISDIR(st->st_mode) ? "a directory" : S_ISSOCK(st->st_mode) ? "another socket" :
	       "something else";
}

/* A unix socket's address for path: -1 if path does not fit sun_path. */
static int sock_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -1;
	memcpy(a->sun_path, path, strlen(path));
	return 0;
}

/* A socket listening at p->tmp (anyone may connect: the history is the machine's),
 * its file's device and inode in *dev, *ino. The fd, or -1 with err. */
static int bind_tmp(struct fts__publisher *p, dev_t *dev, ino_t *ino, char *err, size_t errlen)
{
	struct sockaddr_un a;
	struct stat st;
	int fd;

	if (sock_addr(&a, p->tmp) < 0) {
		say(err, errlen, "%s: too long for a unix socket's path", p->tmp);
		return -1;
	}
	unlink(p->tmp);   /* a leftover of a publisher that had our pid */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(p->tmp, 0666) < 0 ||
	    lstat(p->tmp, &st) < 0 || listen(fd, 128) < 0) {
		say(err, errlen, "%s: %s", p->tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(p->tmp);
		return -1;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
}

/* path with its directory resolved (realpath), into out: where it is, once for all (a
 * symbolic link on the way could be pointed elsewhere later). */
static int resolve(char *out, size_t outlen, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], real[PATH_MAX];

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	if (!realpath(dir, real)) {
		say(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(out, outlen, "%s/%s", strcmp(real, "/") ? real : "",
			     slash ? slash + 1 : path) >= outlen) {
		say(err, errlen, "%s: too long", path);
		return -1;
	}
	return 0;
}

/* Is what is at path ours to replace: nothing, or a socket no publisher answers at (a
 * dead publisher's; ask: connect to find out)? Never a file of any other kind: a
 * mistyped path must not cost a file. 0, or -1 with why in err. */
static int replaceable(const char *path, int ask, char *err, size_t errlen)
{
	struct sockaddr_un a;
	struct stat st;
	int fd, rc, e;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		say(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		say(err, errlen, "%s: exists and is %s, not a socket (only a socket a stopped "
		    "publisher left is replaced)", path, what_is(&st));
		return -1;
	}
	if (!ask || sock_addr(&a, path) < 0)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = errno;
	if (fd >= 0)
		close(fd);
	if (rc < 0 && e == ECONNREFUSED)
		return 0;
	say(err, errlen, "%s: %s", path, rc == 0 || e == EAGAIN ? "a publisher answers at this "
	    "socket (its lock file removed?): it is not replaced" : strerror(e));
	return -1;
}

int fts__publisher_open(struct fts__publisher *p, const char *path, const struct fts__head *id,
			uint64_t interval_ns, uint32_t dircap, size_t region_len, uint32_t nregions,
			void **region, char *err, size_t errlen)
{
	char lock[4200], self[64];
	struct sockaddr_un a;
	struct rlimit nofile;

	memset(p, 0, sizeof(*p));
	p->lockfd = p->memfd = p->rofd = p->listenfd = p->wakefd = -1;
	pthread_mutex_init(&p->news_lock, NULL);
	if (!path || !*path || strlen(path) >= sizeof(p->path) - 32) {
		say(err, errlen, "the path is empty or too long");
		return -1;
	}
	if (resolve(p->path, sizeof(p->path), path, err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(p->tmp, sizeof(p->tmp), "%s.new.%ld", p->path, (long)getpid()) >=
		    sizeof(p->tmp) || sock_addr(&a, p->tmp) < 0) {
		say(err, errlen, "%s: too long for a unix socket's path (%zu bytes at most, with "
		    ".new.PID)", p->path, sizeof(a.sun_path) - 1);
		return -1;
	}
	if (check_dir(p->path, err, errlen) < 0 || replaceable(p->path, 0, err, errlen) < 0)
		return -1;
	/* Unread answers: half the fds this process may hold and have in flight. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
		nofile.rlim_cur = 1024;
	p->held_cap = nofile.rlim_cur / 2 < FTS__SHM_HELD_MAX ? (uint32_t)nofile.rlim_cur / 2
							    : FTS__SHM_HELD_MAX;
	p->held_cap = p->held_cap < 8 ? 8 : p->held_cap;
	p->uid_cap = p->held_cap / 4 < FTS__SHM_UID_MAX ? p->held_cap / 4 : FTS__SHM_UID_MAX;
	p->held = calloc(p->held_cap, sizeof(*p->held));
	if (!p->held) {
		say(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	snprintf(lock, sizeof(lock), "%s.lock", p->path);
	p->lockfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (p->lockfd < 0) {
		say(err, errlen, "%s: %s", lock, strerror(errno));
		goto fail;
	}
	if (flock(p->lockfd, LOCK_EX | LOCK_NB) < 0) {
		say(err, errlen, "%s: %s", path, errno == EWOULDBLOCK ?
		    "another faststamp serve publishes here" : strerror(errno));
		goto fail;
	}
	if (replaceable(p->path, 1, err, errlen) < 0)
		goto fail;
	/* The memory: sized, mapped for writing, then sealed (the seals after the mapping:
	 * F_SEAL_FUTURE_WRITE leaves a mapping made before it writable). */
	p->len = FTS__SHM_HEAD + (size_t)(nregions - 1) * fts__shm_stride(region_len) + region_len;
	p->memfd = memfd_create("faststamp-history", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (p->memfd < 0 || ftruncate(p->memfd, (off_t)p->len) < 0 ||
	    (p->map = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0)) == MAP_FAILED) {
		say(err, errlen, "the history's memory: %s", strerror(errno));
		p->map = NULL;
		goto fail;
	}
	if (fcntl(p->memfd, F_ADD_SEALS, FTS__SEALS | F_SEAL_SEAL) < 0) {
		say(err, errlen, "sealing the history's memory: %s%s", strerror(errno),
		    errno == EINVAL ? " (a kernel before Linux 5.1?)" : "");
		goto fail;
	}
	/* Readers get it read-only: they cannot even try to change its size. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", p->memfd);
	p->rofd = open(self, O_RDONLY | O_CLOEXEC);
	if (p->rofd < 0)
		p->rofd = p->memfd;   /* no /proc: the seals alone hold */
	p->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wakefd < 0) {
		say(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	p->listenfd = bind_tmp(p, &p->dev, &p->ino, err, errlen);
	if (p->listenfd < 0)
		goto fail;
	p->head = p->map;
	*p->head = (struct fts__shm_head){ .version = FTS__SHM_VERSION, .head_bytes = FTS__SHM_HEAD,
					  .dircap = dircap, .kind = id->kind, .region_len = region_len,
					  .counter_hz = id->counter_hz, .interval_ns = interval_ns,
					  .pid = (int32_t)getpid(), .state = FTS__SHM_RUNNING,
					  .nregions = nregions };
	memcpy(p->head->magic, FTS__SHM_MAGIC, 8);
	memcpy(p->head->boot_id, id->boot_id, 16);
	snprintf(p->head->clocksource, sizeof(p->head->clocksource), "%s", id->clocksource);
	fts__now(CLOCK_REALTIME, &p->head->started_ns);
	*region = (char *)p->map + FTS__SHM_HEAD;
	return 0;
fail:
	fts__publisher_close(p, FTS__SHM_STOPPED, err);
	if (p->map)
		munmap(p->map, p->len);
	p->map = NULL;
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

void fts__publisher_resolution(struct fts__publisher *p, int64_t res_ns, uint64_t res_ticks)
{
	p->head->res_ns = res_ns;
	p->head->res_ticks = res_ticks;
	p->head->res_said = 1;
}

static void news(struct fts__publisher *p, int failed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void news(struct fts__publisher *p, int failed, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&p->news_lock);
	va_start(ap, fmt);
	vsnprintf(p->news, sizeof(p->news), fmt, ap);
	va_end(ap);
	p->failed |= failed;
	p->news_seq++;
	pthread_mutex_unlock(&p->news_lock);
}

int fts__publisher_news(struct fts__publisher *p, unsigned *seq, char *buf, size_t len,
			int *failed)
{
	int rc = 0;

	pthread_mutex_lock(&p->news_lock);
	*failed = p->failed;
	if (p->news_seq != *seq) {
		*seq = p->news_seq;
		say(buf, len, "%s", p->news);
		rc = 1;
	}
	pthread_mutex_unlock(&p->news_lock);
	return rc;
}

/* Close the held connections whose answer was taken, or whose reader went: what its
 * reader has not taken, the kernel counts as unsent (SIOCOUTQ). */
static void release_read(struct fts__publisher *p)
{
	uint32_t i = 0;
	int unsent;

	while (i < p->nheld) {
		if (ioctl(p->held[i].fd, SIOCOUTQ, &unsent) < 0 || unsent == 0) {
			close(p->held[i].fd);
			p->held[i] = p->held[--p->nheld];
		} else {
			i++;
		}
	}
}

/* May a reader of uid be sent an fd: its user under its share, and all under theirs
 * (root and this user may use the room kept for them)? */
static int has_room(const struct fts__publisher *p, uid_t uid)
{
	uint32_t mine = 0;

	if (p->nheld >= (uid == 0 || uid == geteuid() ? p->held_cap : p->held_cap - p->uid_cap))
		return 0;
	for (uint32_t i = 0; i < p->nheld; i++)
		mine += p->held[i].uid == uid;
	return mine < p->uid_cap;
}

/* One reader: the read-only fd, and a byte (a stream carries fds only with data); or,
 * when its user's share of unread answers is used up, the byte that says so. Never
 * waits for the reader. conn is closed, or held until its answer is read. */
static void answer(struct fts__publisher *p, int conn)
{
	char byte = FTS__SHM_GRANTED, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct cmsghdr *c;
	uid_t uid = getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 ? cred.uid
									       : (uid_t)-1;

	if (!has_room(p, uid))
		release_read(p);
	if (!has_room(p, uid)) {
		byte = FTS__SHM_REFUSED;
		m.msg_control = NULL;
		m.msg_controllen = 0;
		sendmsg(conn, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(conn);
		/* said at the first refusal, then at each doubling: a flood is not a log's */
		p->refused++;
		if (!(p->refused & (p->refused - 1)))
			news(p, 0, "uid %lu leaves %u answers unread (connections that never read "
			     "theirs): its readers are refused the history until they read (%llu "
			     "refused so far)", (unsigned long)uid, p->uid_cap,
			     (unsigned long long)p->refused);
		return;
	}
	memset(ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p->rofd, sizeof(int));
	if (sendmsg(conn, &m, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
		p->answered++;
		p->held[p->nheld++] = (struct fts__held){ .fd = conn, .uid = uid };
		return;
	}
	close(conn);
}

/* The first reader waiting at listenfd: 1 answered, 0 none waiting, -1 when accept
 * failed for want of resources. */
static int answer_one(struct fts__publisher *p, int listenfd)
{
	int conn = accept4(listenfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (conn < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : -1;
	answer(p, conn);
	return 1;
}

/* Every reader waiting at listenfd. -1 when accept failed for want of resources. */
static int answer_all(struct fts__publisher *p, int listenfd)
{
	int rc;

	while ((rc = answer_one(p, listenfd)) > 0)
		;
	return rc;
}

/* Is our socket still at path? If not, bind a new one and put it there. The memory is
 * not at path: nothing done there reaches it, so this is all there is to repair. */
static void watch_path(struct fts__publisher *p)
{
	struct stat st;
	char err[300], was[64];
	dev_t dev;
	ino_t ino;
	int fd;

	if (lstat(p->path, &st) == 0 && st.st_dev == p->dev && st.st_ino == p->ino)
		return;
	if (p->failed)
		return;
	if (lstat(p->path, &st) < 0)
		snprintf(was, sizeof(was), "%s", errno == ENOENT ? "removed" : strerror(errno));
	else
		snprintf(was, sizeof(was), "replaced by %s", what_is(&st));
	/* Another socket: another publisher took the path (its lock removed?). Taking it
	 * back would start a fight every 100 ms; the newcomer keeps it. */
	if (strstr(was, "another socket")) {
		news(p, 1, "%s was %s (another publisher?): leaving the path to it", p->path, was);
		return;
	}
	if (check_dir(p->path, err, sizeof(err)) < 0) {
		news(p, 1, "%s was %s, and its directory cannot be used any more: %s", p->path, was,
		     err);
		return;
	}
	fd = bind_tmp(p, &dev, &ino, err, sizeof(err));
	if (fd >= 0 && rename(p->tmp, p->path) < 0) {
		say(err, sizeof(err), "%s: %s", p->path, strerror(errno));
		close(fd);
		unlink(p->tmp);
		fd = -1;
	}
	if (fd < 0) {
		news(p, 1, "%s was %s, and a new socket could not be put there: %s", p->path, was, err);
		return;
	}
	answer_all(p, p->listenfd);   /* readers queued on the old socket: answered */
	close(p->listenfd);
	p->listenfd = fd;
	p->dev = dev;
	p->ino = ino;
	p->rebinds++;
	news(p, 0, "%s was %s: published there again (%llu time%s; readers attached keep the "
	     "history, which nothing at the path can reach)", p->path, was,
	     (unsigned long long)p->rebinds, p->rebinds == 1 ? "" : "s");
}

/* The answering thread (all signals blocked: created so): readers, and path. */
static void *answering(void *arg)
{
	struct fts__publisher *p = arg;
	int64_t next = 0, now;

	for (;;) {
		struct pollfd f[2] = { { .fd = p->listenfd, .events = POLLIN },
				       { .fd = p->wakefd, .events = POLLIN } };

		if (fts__now(CLOCK_MONOTONIC, &now) == 0 && now >= next) {
			watch_path(p);
			release_read(p);
			next = now + FTS__SHM_WATCH_NS;
		}
		f[0].fd = p->listenfd;
		if (poll(f, 2, (int)(FTS__SHM_WATCH_NS / 1000000)) < 0 && errno != EINTR)
			fts__sleep_until(now + FTS__SHM_WATCH_NS);   /* not to spin */
		if (f[1].revents)
			return NULL;
		/* One reader a wake-up (poll is level-triggered: the next returns at once if
		 * more wait): the reader that woke it runs again, on this CPU, as soon as this
		 * thread sleeps, not after an accept that finds no one. */
		if (f[0].revents & POLLIN && answer_one(p, p->listenfd) < 0)
			fts__sleep_until(now + 10000000);   /* out of fds: not to spin on POLLIN */
	}
}

int fts__publisher_show(struct fts__publisher *p, char *err, size_t errlen)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (replaceable(p->path, 1, err, errlen) < 0)   /* again: the first samples took time */
		return -1;
	if (rename(p->tmp, p->path) < 0) {
		say(err, errlen, "%s: %s", p->path, strerror(errno));
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_attr_init(&attr);
	if (rc == 0) {
		rc = pthread_create(&p->thread, &attr, answering, p);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		say(err, errlen, "the thread answering readers: %s", strerror(rc));
		return -1;
	}
	p->thread_on = 1;
	return 0;
}

void fts__publisher_beat(struct fts__publisher *p, uint64_t counter)
{
	if (p->head)
		__atomic_store_n(&p->head->beat, counter, __ATOMIC_RELEASE);
}

void fts__publisher_close(struct fts__publisher *p, uint32_t state, const char *why)
{
	struct stat st;
	uint64_t one = 1;

	if (p->head) {
		snprintf(p->head->why, sizeof(p->head->why), "%s", why ? why : "");
		__atomic_store_n(&p->head->state, state, __ATOMIC_RELEASE);
	}
	if (p->thread_on) {
		if (write(p->wakefd, &one, sizeof(one)) < 0) {
			/* an eventfd at its limit: the thread wakes anyway */
		}
		pthread_join(p->thread, NULL);
		p->thread_on = 0;
	}
	/* Our socket leaves with us; anything else at the path is someone else's. */
	if (p->listenfd >= 0 && lstat(p->path, &st) == 0 && st.st_dev == p->dev &&
	    st.st_ino == p->ino)
		unlink(p->path);
	if (p->tmp[0])
		unlink(p->tmp);
	p->tmp[0] = '\0';
	if (p->rofd >= 0 && p->rofd != p->memfd)
		close(p->rofd);
	if (p->memfd >= 0)
		close(p->memfd);   /* the mapping keeps the memory */
	if (p->listenfd >= 0)
		close(p->listenfd);
	if (p->wakefd >= 0)
		close(p->wakefd);
	if (p->lockfd >= 0)
		close(p->lockfd);
	while (p->nheld)
		close(p->held[--p->nheld].fd);
	free(p->held);
	p->held = NULL;
	p->rofd = p->memfd = p->listenfd = p->wakefd = p->lockfd = -1;
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
	    h->nregions > FTS__NCLK || size - FTS__SHM_HEAD < h->region_len ||
	    (size - FTS__SHM_HEAD - h->region_len) / fts__shm_stride(h->region_len) <
		    (size_t)fts__shared_regions(h) - 1) {
		say(why, len, "its geometry does not match its size (truncated?)");
		return -1;
	}
	return 0;
}

uint32_t fts__shared_regions(const struct fts__shm_head *h)
{
	return h->nregions ? h->nregions : 1;
}

void fts__shared_view(struct fts_calib *c, void *map, const struct fts__shm_head *h, uint32_t i)
{
	memset(c, 0, sizeof(*c));
	fts__calib_layout(c, (char *)map + FTS__SHM_HEAD + (size_t)i * fts__shm_stride(h->region_len),
			  h->dircap);
	c->flags_ok = FTS__SEG_STEP;   /* the fast path's flag is the writer's claim */
	c->bounded = 1;
}

/* Is uid one a reader may trust: root, the reader's own, or the service's user? That
 * user is looked up in /etc/passwd first, where a system user is. NSS, the fallback,
 * costs a cold process several times more: its configuration and modules loaded, and
 * with systemd's module a round trip to its user database for a name not in the file. */
static int trusted_owner(uid_t uid)
{
	struct passwd pw, *r = NULL;
	char buf[1024];
	uint32_t svc;
	int in_file;

	if (uid == 0 || uid == geteuid())
		return 1;
	in_file = fts__passwd_uid("/etc/passwd", FTS_SERVICE_USER, &svc);
	if (in_file > 0)
		return svc == uid;
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

/* The fds of an SCM_RIGHTS answer: the first in *fd (-1: none), every other closed.
 * -1 if the answer was cut (fds may have been lost on the way). */
static int take_fds(struct msghdr *m, int *fd)
{
	*fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (m->msg_flags & MSG_CTRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

/* Wait for sock to be readable until deadline (CLOCK_MONOTONIC ns): 1, or 0 at the
 * deadline, whatever signals arrive. */
static int wait_readable(int sock, int64_t deadline)
{
	for (;;) {
		struct pollfd f = { .fd = sock, .events = POLLIN };
		int64_t now;

		if (fts__now(CLOCK_MONOTONIC, &now) < 0 || now >= deadline)
			return 0;
		int ms = (int)((deadline - now + 999999) / 1000000);
		int r = poll(&f, 1, ms);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
	}
}

int fts__shared_ask(const char *path, char *why, size_t len)
{
	struct sockaddr_un a;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct stat st;
	int sock;

	if (lstat(path, &st) < 0) {
		say(why, len, "%s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		say(why, len, "a symbolic link (not followed)");
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		say(why, len, "not a socket (faststamp serve publishes through a unix socket; "
		    "this is %s)", what_is(&st));
		return -1;
	}
	if (sock_addr(&a, path) < 0) {
		say(why, len, "too long for a unix socket's path");
		return -1;
	}
	/* Non-blocking: a publisher whose queue is full, or that does not answer, costs
	 * this conversion FTS__SHM_ANSWER_NS at most. */
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sock < 0) {
		say(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(sock, (struct sockaddr *)&a, sizeof(a)) < 0) {
		say(why, len, "%s", errno == ECONNREFUSED ? "no publisher listens there (its "
		    "publisher stopped or died)" : errno == EAGAIN ? "its publisher is too busy "
		    "to answer" : strerror(errno));
		goto out;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		say(why, len, "SO_PEERCRED: %s", strerror(errno));
		goto out;
	}
	if (!trusted_owner(cred.uid)) {
		say(why, len, "its publisher runs as uid %lu, not root, this user or %s",
		    (unsigned long)cred.uid, FTS_SERVICE_USER);
		goto out;
	}
	return sock;
out:
	close(sock);
	return -1;
}

int fts__shared_take(int sock, char *why, size_t len)
{
	char byte, ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	int64_t now;
	ssize_t r;
	int fd = -1, seals;

	/* The answer is often there already: the publisher's thread, woken by connect,
	 * runs on this CPU before connect returns, or on another while the caller did its
	 * own work (fts__shared_ask). A poll only when it is not. */
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN) {
		if (fts__now(CLOCK_MONOTONIC, &now) < 0 ||
		    !wait_readable(sock, now + FTS__SHM_ANSWER_NS)) {
			say(why, len, "its publisher did not answer within %lld ms",
			    (long long)(FTS__SHM_ANSWER_NS / 1000000));
			goto out;
		}
		do
			r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		while (r < 0 && errno == EINTR);
	}
	if (r < 0) {
		say(why, len, "its answer: %s", strerror(errno));
		goto out;
	}
	if (take_fds(&m, &fd) < 0 || fd < 0) {
		say(why, len, "%s", r == 1 && byte == FTS__SHM_REFUSED ?
		    "its publisher refused this user: it leaves too many answers unread "
		    "(connections that never read theirs)" : "its answer held no history's memory");
		goto out;
	}
	/* The one rule that keeps every signal away: memory no one can shrink. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		say(why, len, "its memory is not sealed against shrinking and growing%s",
		    seals < 0 ? " (not a memfd)" : "");
		goto bad;
	}
	if (!(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))) {
		say(why, len, "its memory is not sealed against writing: any reader could change it");
		goto bad;
	}
	close(sock);
	return fd;
bad:
	close(fd);
out:
	close(sock);
	return -1;
}

int fts__shared_fetch(const char *path, char *why, size_t len)
{
	int sock = fts__shared_ask(path, why, len);

	return sock < 0 ? -1 : fts__shared_take(sock, why, len);
}

int fts__shared_attach(struct fts__shared *s, int sock, const struct fts__head *id,
		       const cpu_set_t *need, uint64_t counter_now, char *why, size_t len)
{
	struct stat st;
	void *map = MAP_FAILED;
	const struct fts__shm_head *h;
	char b[64];
	int fd;

	memset(s, 0, sizeof(*s));
	fd = fts__shared_take(sock, why, len);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		say(why, len, "%s", strerror(errno));
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
	for (uint32_t i = 0; i < fts__shared_regions(h); i++) {
		fts__shared_view(&s->viewbuf[i], map, h, i);
		s->views[i] = &s->viewbuf[i];
	}
	s->view = s->views[0];
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

int fts__shared_resolution(const struct fts__shm_head *h, int64_t *ns, uint64_t *ticks)
{
	/* the grid in ticks at the counter's rate; the probe adds 10 % and 1 */
	unsigned __int128 grid = (unsigned __int128)(uint64_t)h->res_ns * h->counter_hz / 1000000000;

	if (h->res_said != 1 || h->res_ns < 0 || h->res_ns > FTS__SHM_RES_MAX_NS ||
	    (h->res_ns == 0) != (h->res_ticks == 0) ||
	    (h->res_ns && (h->res_ticks < grid || h->res_ticks > 2 * grid + 2)))
		return 0;
	*ns = h->res_ns;
	*ticks = h->res_ticks;
	return 1;
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
