/* event.c - the event path's hot side: the event types (a registry any thread may add
 * to) and each thread's ring, written by its thread alone, read by the drain alone
 * (trace.c). docs/events.md has the design. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "internal.h"

#define RING_DEFAULT 16384      /* 768 KiB: 0.8 ms of 20 M events a second */
#define RING_MIN 64
#define RING_MAX (1u << 24)

FTS__API _Alignas(64) int fts__trace_on;   /* a line of its own: read by every event */
/* The drain's wake-up: the futex word writers bump and whether the drain sleeps on it;
 * written by the drain at each of its sleeps, on a line of its own, apart from what
 * every event reads (fts__trace_on, the type count and the types' field counts). */
static struct {
	_Alignas(64) uint32_t kick;
	int sleeping;
	int narrowed;    /* a writer kept the drain off its CPU for a wake-up */
} drain_wake;
_Static_assert(sizeof(drain_wake) == 64, "the drain's wake-up fills its line");
/* The drain thread from its first sleep to its end (0 before and after), and the CPUs
 * it could run on at that first sleep (the drain's alone; none if it could not say,
 * and then a writer's narrowing is never undone: sched_setaffinity refuses none). */
static pid_t drain_tid;
static cpu_set_t drain_cpus;

/* ---- types --------------------------------------------------------------------------- */

static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fts__evtype types[FTS_EVENT_TYPES_MAX];
/* What every event reads, written only as a type is defined: lines of their own (no
 * lock the drain takes beside them). */
static struct {
	_Alignas(64) int ntypes;        /* published with release */
	uint8_t nf[FTS_EVENT_TYPES_MAX];
} hot;

int fts__event_types_count(void)
{
	return __atomic_load_n(&hot.ntypes, __ATOMIC_ACQUIRE);
}

const struct fts__evtype *fts__event_type_get(int id)
{
	return id >= 0 && id < fts__event_types_count() ? &types[id] : NULL;
}

static int ident_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

int fts__event_type_parse(const char *name, const char *fields, struct fts__evtype *t)
{
	size_t len;

	memset(t, 0, sizeof(*t));
	if (!name || !fields || !(len = strlen(name)) || len > FTS_EVENT_NAME_MAX)
		return EINVAL;
	for (size_t i = 0; i < len; i++)
		if (name[i] < 0x20 || name[i] > 0x7e || name[i] == '"' || name[i] == '\\')
			return EINVAL;
	memcpy(t->name, name, len);
	for (const char *p = fields; *fields;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (t->nfields == FTS_EVENT_MAX_FIELDS || !n || n > FTS_EVENT_FIELD_MAX)
			return EINVAL;
		for (size_t i = 0; i < n; i++)
			if (!ident_char(p[i], i == 0))
				return EINVAL;
		memcpy(t->fields[t->nfields], p, n);
		for (unsigned k = 0; k < t->nfields; k++)
			if (!strcmp(t->fields[k], t->fields[t->nfields]))
				return EINVAL;
		t->nfields++;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

int fts_event_define(const char *name, const char *fields)
{
	struct fts__evtype t;
	int id, rc;

	if ((rc = fts__event_type_parse(name, fields, &t)) != 0)
		return fts__fail(rc);
	pthread_mutex_lock(&types_lock);
	for (id = 0; id < hot.ntypes; id++)
		if (!strcmp(types[id].name, t.name))
			break;
	if (id < hot.ntypes) {
		rc = memcmp(&types[id], &t, sizeof(t)) ? EEXIST : 0;
	} else if (id == FTS_EVENT_TYPES_MAX) {
		rc = ENOSPC;
	} else {
		types[id] = t;
		hot.nf[id] = (uint8_t)t.nfields;
		__atomic_store_n(&hot.ntypes, id + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&types_lock);
	return rc ? fts__fail(rc) : id;
}

/* ---- rings --------------------------------------------------------------------------- */

/* The writer's line and the drain's line apart: the writer writes only its own. */
struct fts__ring {
	_Alignas(64) uint64_t head;     /* records published (release) */
	uint64_t tail_seen;             /* the writer's last look at tail */
	uint64_t dropped;               /* refused: the ring was full */
	uint64_t reentered;             /* refused: a handler's event inside an event */
	uint64_t kicked_at;             /* head + dropped when the writer last woke the drain */
	struct fts__evrec *rec;
	uint64_t mask;
	uint32_t tid;
	int writing;
	_Alignas(64) uint64_t tail;     /* records taken (release), by the drain */
	uint64_t dropped_seen;          /* dropped + reentered at the last batch */
	int dead;                       /* its thread exited (release) */
	struct fts__ring *next;
};

/* The list of rings, written by the drain at each round: lines of their own. */
static struct {
	_Alignas(64) pthread_mutex_t lock;
	struct fts__ring *list;
	uint64_t orphan_drops;          /* no memory for a ring */
} rs = { .lock = PTHREAD_MUTEX_INITIALIZER };
static size_t ring_records = RING_DEFAULT;
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static __thread struct fts__ring *my_ring __attribute__((tls_model("initial-exec")));

static void ring_exit(void *p)
{
	struct fts__ring *r = p;

	my_ring = NULL;
	__atomic_store_n(&r->dead, 1, __ATOMIC_RELEASE);
}

static void before_fork(void)
{
	pthread_mutex_lock(&types_lock);
	pthread_mutex_lock(&rs.lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&rs.lock);
	pthread_mutex_unlock(&types_lock);
}

static void make_key(void)
{
	pthread_key_create(&ring_key, ring_exit);
	pthread_atfork(before_fork, after_fork, after_fork);
}

static int ring_size_ok(unsigned long v)
{
	return v >= RING_MIN && v <= RING_MAX && !(v & (v - 1));
}

int fts_event_ring_size(size_t records)
{
	if (!ring_size_ok(records))
		return fts__fail(EINVAL);
	__atomic_store_n(&ring_records, records, __ATOMIC_RELAXED);
	return 0;
}

int fts__event_rings_configure(void)
{
	const char *e = getenv("FASTSTAMP_EVENT_RING");
	char *end;
	unsigned long v;

	pthread_once(&ring_once, make_key);
	if (!e || !*e)
		return 0;
	v = strtoul(e, &end, 10);
	if (*end || *e < '0' || *e > '9' || !ring_size_ok(v))
		return -EINVAL;   /* said, not passed over: the size a user asked for */
	__atomic_store_n(&ring_records, (size_t)v, __ATOMIC_RELAXED);
	return 0;
}

size_t fts__event_rings_size(void)
{
	return __atomic_load_n(&ring_records, __ATOMIC_RELAXED);
}

/* The thread's first event: its ring (the one allocation of the hot path). */
static struct fts__ring *ring_new(void)
{
	size_t n = fts__event_rings_size();
	struct fts__ring *r;

	pthread_once(&ring_once, make_key);
	if (!(r = aligned_alloc(64, sizeof(*r))))
		return NULL;
	memset(r, 0, sizeof(*r));
	/* Every page mapped now, at the first event: no page fault in a later one. Not
	 * inherited by a fork's child (which does not trace its parent's events): a fork
	 * leaves no page of it copy-on-write, so the writer takes no fault after one. */
	r->rec = mmap(NULL, n * sizeof(struct fts__evrec), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r->rec == MAP_FAILED) {
		free(r);
		return NULL;
	}
	madvise(r->rec, n * sizeof(struct fts__evrec), MADV_DONTFORK);
	/* and written once here: the kernel zeroes new pages around the caches, so that
	 * the first pass through the ring would take a memory read a record (4 times a
	 * record's cost); now it starts in the cache, as later passes do */
	memset(r->rec, 0, n * sizeof(struct fts__evrec));
	r->mask = n - 1;
	r->tid = (uint32_t)syscall(SYS_gettid);
	if (pthread_setspecific(ring_key, r)) {
		munmap(r->rec, n * sizeof(struct fts__evrec));
		free(r);
		return NULL;
	}
	pthread_mutex_lock(&rs.lock);
	r->next = rs.list;
	rs.list = r;
	pthread_mutex_unlock(&rs.lock);
	return my_ring = r;
}

/* The drain, at its first sleep: its thread and its CPUs, kept. */
static void drain_started(void)
{
	if (sched_getaffinity(0, sizeof(drain_cpus), &drain_cpus) != 0)
		CPU_ZERO(&drain_cpus);
	__atomic_store_n(&drain_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

int fts__event_drain_ready(void)
{
	return __atomic_load_n(&drain_tid, __ATOMIC_ACQUIRE) != 0;
}

/* Polled, not woken: a wake-up from the drain would let the starter preempt it before
 * it sleeps. */
void fts__event_drain_wait_started(void)
{
	struct timespec ts = { 0, 50000 };

	for (int i = 0; i < 20000 && !(fts__event_drain_ready() &&
				       __atomic_load_n(&drain_wake.sleeping, __ATOMIC_RELAXED)); i++)
		nanosleep(&ts, NULL);
}

void fts__event_drain_stopped(void)
{
	__atomic_store_n(&drain_tid, 0, __ATOMIC_RELEASE);
}

void fts__event_drain_sleep(int how, int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	uint32_t k = __atomic_load_n(&drain_wake.kick, __ATOMIC_ACQUIRE);

	if (!__atomic_load_n(&drain_tid, __ATOMIC_RELAXED))
		drain_started();
	__atomic_store_n(&drain_wake.sleeping, how, __ATOMIC_RELAXED);
	syscall(SYS_futex, &drain_wake.kick, FUTEX_WAIT_PRIVATE, k, &ts, NULL, 0);
	__atomic_store_n(&drain_wake.sleeping, 0, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&drain_wake.narrowed, 0, __ATOMIC_ACQUIRE))
		sched_setaffinity(0, sizeof(drain_cpus), &drain_cpus);
}

void fts__event_drain_kick(void)
{
	__atomic_add_fetch(&drain_wake.kick, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &drain_wake.kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* A writer's wake-up of the drain. The scheduler puts a thread that another woke on its
 * waker's CPU, even with another CPU idle (as measured on a 2-CPU virtual machine): the
 * drain would wait behind the writer for the rest of its burst (a burst shorter than a
 * scheduler tick is never balanced), and the ring would fill. So the drain's CPUs leave
 * out the writer's for this wake-up (it takes back those of its first sleep when it
 * wakes); a drain that may run nowhere else is woken as it is. Three system calls a
 * wake-up, at most one a quarter of a ring of events. */
static void drain_wake_from(void)
{
	pid_t tid = __atomic_load_n(&drain_tid, __ATOMIC_ACQUIRE);
	int cpu = sched_getcpu();
	cpu_set_t away;

	if (tid && cpu >= 0 && cpu < CPU_SETSIZE &&
	    sched_getaffinity(tid, sizeof(away), &away) == 0 && CPU_ISSET(cpu, &away)) {
		CPU_CLR(cpu, &away);
		if (CPU_COUNT(&away) && sched_setaffinity(tid, sizeof(away), &away) == 0)
			__atomic_store_n(&drain_wake.narrowed, 1, __ATOMIC_RELEASE);
	}
	fts__event_drain_kick();
}

/* At each eighth of the ring the writer writes, and at each event a full ring refuses
 * (the places it reads the drain's lines): wake the drain, at most once per quarter of
 * a ring of events offered (written or refused), when it backed off after idle and a
 * quarter of the ring or more waits for it (a burst into a ring the drain left idle
 * wakes it with three quarters to go), or when it sleeps the time a quarter should take
 * at the last rate and half the ring waits (the rate rose), or when the ring is full,
 * the drain asleep or not: a drain runnable but queued on the writer's CPU (one the
 * writer preempted in a round, or one its own timer woke there) is moved off it. A
 * drain that keeps pace wakes on its own. */
static __attribute__((noinline)) void ring_look(struct fts__ring *r, uint64_t h)
{
	uint64_t quarter = (r->mask + 1) >> 2, offered = h + r->dropped;
	int sleeping;

	r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (offered - r->kicked_at < quarter)
		return;
	if (h - r->tail_seen > r->mask ||
	    (h - r->tail_seen >= quarter &&
	     (sleeping = __atomic_load_n(&drain_wake.sleeping, __ATOMIC_RELAXED)) != 0 &&
	     (sleeping == FTS__DRAIN_IDLE || h - r->tail_seen >= 2 * quarter))) {
		r->kicked_at = offered;
		drain_wake_from();
	}
}

FTS__API FTS__HOT int fts__event_put(uint32_t head, uint64_t f0, uint64_t f1, uint64_t f2,
				     uint64_t f3)
{
	struct fts__ring *r = my_ring;
	uint32_t type = FTS__EV_TYPE(head);
	struct fts__evrec *e;
	uint64_t h;

	if (__builtin_expect(head >> 31 || (int)type >= __atomic_load_n(&hot.ntypes, __ATOMIC_ACQUIRE) ||
			     FTS__EV_NF(head) > hot.nf[type], 0))
		return fts__fail(EINVAL);
	if (__builtin_expect(!r, 0) && !(r = ring_new())) {
		__atomic_add_fetch(&rs.orphan_drops, 1, __ATOMIC_RELAXED);
		return fts__fail(ENOMEM);
	}
	if (__builtin_expect(r->writing, 0)) {
		/* a signal handler's event inside one of this thread's: the ring is the
		 * interrupted event's until it returns */
		__atomic_store_n(&r->reentered, r->reentered + 1, __ATOMIC_RELAXED);
		return fts__fail(ENOBUFS);
	}
	r->writing = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h = r->head;
	if (__builtin_expect(h - r->tail_seen > r->mask, 0)) {
		/* seems full: a look at the drain's tail (and a wake-up if it sleeps) */
		ring_look(r, h);
		if (h - r->tail_seen > r->mask) {
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			r->writing = 0;
			return fts__fail(ENOBUFS);
		}
	}
	e = &r->rec[h & r->mask];
	if (head & FTS__EV_RELAXED << 16)
		fts_store_relaxed(&e->stamp);
	else
		store_fast_timestamp(&e->stamp);
	e->head = head & ~(FTS__EV_RELAXED << 16);
	e->tid = r->tid;
	e->f[0] = f0;
	e->f[1] = f1;
	e->f[2] = f2;
	e->f[3] = f3;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	if (__builtin_expect(!((h + 1) & (r->mask >> 3)), 0))
		ring_look(r, h + 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->writing = 0;
	return 0;
}

size_t fts__event_rings_take(struct fts__ring_batch **bp, size_t *cap, size_t most, int whole)
{
	size_t n = 0;

	pthread_mutex_lock(&rs.lock);
	for (struct fts__ring *r = rs.list; r; r = r->next) {
		uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), t = r->tail;
		uint64_t d = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED) +
			     __atomic_load_n(&r->reentered, __ATOMIC_RELAXED);
		struct fts__ring_batch *b;
		size_t at = (size_t)(t & r->mask);

		if (h == t && d == r->dropped_seen)
			continue;
		if (n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			struct fts__ring_batch *nb = realloc(*bp, c * sizeof(*nb));
			if (!nb) {
				n = (size_t)-1;
				break;
			}
			*bp = nb;
			*cap = c;
		}
		b = &(*bp)[n++];
		*b = (struct fts__ring_batch){ .ring = r, .dropped_to = d, .tid = r->tid,
					       .dropped = d - r->dropped_seen,
					       .n = h - t < most ? (size_t)(h - t) : most };
		/* whole lines: records 4k to 4k + 3 fill 3 lines of their own (the ring is
		 * page-aligned), so the round leaves the line the writer writes next alone */
		if (whole && b->n > FTS__REC_PER_LINES)
			b->n -= (size_t)((t + b->n) % FTS__REC_PER_LINES);
		b->head = t + b->n;   /* where the release puts the tail */
		b->rec1 = r->rec + at;
		b->n1 = b->n < r->mask + 1 - at ? b->n : r->mask + 1 - at;
		b->rec2 = r->rec;
		b->n2 = b->n - b->n1;
	}
	pthread_mutex_unlock(&rs.lock);
	return n;
}

void fts__event_rings_release(const struct fts__ring_batch *b, size_t n)
{
	struct fts__ring **pp, *r;

	pthread_mutex_lock(&rs.lock);
	for (size_t i = 0; i < n; i++) {
		__atomic_store_n(&b[i].ring->tail, b[i].head, __ATOMIC_RELEASE);
		b[i].ring->dropped_seen = b[i].dropped_to;
	}
	/* a ring whose thread is gone, its every record and drop released: freed (only
	 * the drain frees rings, so a batch's pointers held between take and release stay) */
	for (pp = &rs.list; (r = *pp);) {
		if (__atomic_load_n(&r->dead, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail &&
		    __atomic_load_n(&r->dropped, __ATOMIC_RELAXED) +
				    __atomic_load_n(&r->reentered, __ATOMIC_RELAXED) == r->dropped_seen) {
			*pp = r->next;
			munmap(r->rec, (r->mask + 1) * sizeof(struct fts__evrec));
			free(r);
			continue;
		}
		pp = &r->next;
	}
	pthread_mutex_unlock(&rs.lock);
}

void fts__event_rings_reset(void)
{
	pthread_mutex_lock(&rs.lock);
	for (struct fts__ring *r = rs.list; r; r = r->next) {
		__atomic_store_n(&r->tail, __atomic_load_n(&r->head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		r->dropped_seen = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED) +
				  __atomic_load_n(&r->reentered, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&rs.orphan_drops, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rs.lock);
}

uint64_t fts__event_rings_orphan_drops(void)
{
	return __atomic_load_n(&rs.orphan_drops, __ATOMIC_RELAXED);
}

void fts__event_rings_forked(void)
{
	/* the records of the parent's rings are not mapped here (MADV_DONTFORK): the
	 * child's threads make rings of their own, at their first event of its own trace */
	pthread_mutex_lock(&rs.lock);
	while (rs.list) {
		struct fts__ring *r = rs.list;
		rs.list = r->next;
		free(r);
	}
	my_ring = NULL;
	pthread_setspecific(ring_key, NULL);
	rs.orphan_drops = 0;
	drain_tid = 0;   /* the parent's drain, and its state at the fork */
	drain_wake.sleeping = drain_wake.narrowed = 0;
	pthread_mutex_unlock(&rs.lock);
}
