/* rxloop.c - receive datagrams in batches, stamp each one, hand them to a drain thread.
 *
 * The receiving thread does as little as it can per datagram: recvmmsg fills ring slots
 * directly, then each datagram of the batch gets its own stamp as it is taken out
 * (fts_store_relaxed: one counter read, no system call), then its addresses are read
 * from the control messages. The drain thread converts the raw stamps of a run of
 * slots with one fts_convert_array call and writes or prints them, so conversion is
 * paid by the reader of the records, off the receive path.
 *
 * The drain's cost per record is what decides whether a capture keeps up: one
 * fts_convert_array call per run of slots (sorted stamps), payloads read from dense
 * memory (ring.c), records assembled in a buffer that goes out with one write(2) per
 * 256 KiB. An idle drain flushes that buffer only once the ring stayed empty over a
 * nap, or 100 ms after the last write: at a steady rate the ring empties at every
 * visit, and a write(2) each time would cost more than the records.
 *
 * When the ring is full the receiver, by default (FTS_PKT_FULL_WAIT), waits for the
 * drain and leaves the datagrams in the socket buffer: a datagram the kernel has
 * delivered is kept while any buffer has room, and the kernel counts what it drops.
 * Their fast stamps are taken late, when they come out; that is the same lateness
 * as any backlog in the socket, which a stamp taken on reading always has, and
 * --both shows it against the kernel's stamp. FTS_PKT_FULL_DROP keeps emptying the
 * socket into scratch space and counts each datagram as a ring drop, so that the
 * stamps it keeps are never late. The kernel's own drops come from SO_RXQ_OVFL and
 * /proc/net/udp.
 */
#include <errno.h>
#include <linux/net_tstamp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pkt.h"

#define FTS_PKT_CTL 256          /* room for pktinfo, drop count and two timestamps */
#define FTS_PKT_RUN 1024         /* slots converted per fts_convert_array call */
#define FTS_PKT_DRAIN_NAP 200000 /* ns an idle drain sleeps: 40 datagrams at 200 kpps */
#define FTS_PKT_FLUSH_NS 100000000 /* a busy drain still flushes this often */
#define FTS_PKT_WAIT_NAP 20000   /* ns a receiver with a full ring sleeps: 4 datagrams
				  * at 200 kpps, far less than a socket buffer holds */

int fts_pkt_rx_socket(const struct sockaddr_storage *ss, socklen_t len,
		      enum fts_pkt_stamp stamp, int both, int rcvbuf, char *err, size_t errsz)
{
	int one = 1, fd, e;
	struct timeval tv = { 0, 100000 };   /* wake every 100 ms to look at the clock */
	char a[64];

	fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	if (ss->ss_family == AF_INET) {
		if (setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)))
			goto opt_fail;
	} else {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)))
			goto opt_fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		goto opt_fail;
	if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		goto opt_fail;
	if (stamp == FTS_PKT_STAMP_KERNEL || both) {
		int ts = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
		if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
		    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts)))
			goto opt_fail;
	}
	if (bind(fd, (const struct sockaddr *)ss, len)) {
		e = errno;
		snprintf(err, errsz, "cannot listen on %s: %s%s", fts_pkt_format_addr(ss, a, sizeof(a)),
			 strerror(e), e == EADDRINUSE ? " (port in use)" : "");
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
opt_fail:
	e = errno;
	snprintf(err, errsz, "socket option: %s", strerror(e));
	close(fd);
	errno = e;
	return -1;
}

/* The kernel's drop count for this socket, from the last column of /proc/net/udp[6]. */
static int proc_drops(int fd, uint64_t *drops)
{
	static const char *const files[] = { "/proc/net/udp", "/proc/net/udp6" };
	struct stat st;
	char line[512];

	if (fstat(fd, &st))
		return -1;
	for (size_t i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *tok[16], *save = NULL, *t;
			size_t n = 0;
			for (t = strtok_r(line, " \t\n", &save); t && n < 16;
			     t = strtok_r(NULL, " \t\n", &save))
				tok[n++] = t;
			if (n < 13 || strtoull(tok[9], NULL, 10) != (unsigned long long)st.st_ino)
				continue;
			*drops = strtoull(tok[n - 1], NULL, 10);
			fclose(f);
			return 0;
		}
		fclose(f);
	}
	return -1;
}

static int64_t thread_cpu_ns(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

struct drain {
	const struct fts_pkt_rx_opts *o;
	struct fts_pkt_ring *ring;
	int done;                /* receiver finished: drain what is left and exit */
	int failed;              /* drain could not write: the receiver stops */
	uint64_t written;        /* what reached the file or out; the receiver reads it */
	int64_t convert_ns;
	int64_t drain_ns;        /* time spent on records, flushes included */
	char err[256];
};

static void print_ns(char *buf, size_t size, int64_t ns)
{
	snprintf(buf, size, "%lld.%09lld", (long long)(ns / 1000000000),
		 (long long)(ns % 1000000000));
}

/* Count what reached the file, never what is only queued for it: after a failed write
 * the two differ by the records that were lost with the buffer. */
static void publish_written(struct drain *d, uint64_t n)
{
	__atomic_store_n(&d->written, n, __ATOMIC_RELAXED);
}

static int drain_run(struct drain *d, uint32_t tail, uint32_t n)
{
	const struct fts_pkt_rx_opts *o = d->o;
	struct fts_pkt_ring *r = d->ring;
	fast_timestamp_t stamps[FTS_PKT_RUN];
	int64_t ns[FTS_PKT_RUN];
	char comment[96], s[64], t[64], a[32], b[32];

	if (o->stamp == FTS_PKT_STAMP_FAST) {
		int64_t t0 = fts_pkt_now(CLOCK_MONOTONIC);
		for (uint32_t i = 0; i < n; i++)
			stamps[i] = r->slots[(tail + i) & r->mask].stamp;
		if (fts_convert_array(stamps, n, ns, NULL)) {
			snprintf(d->err, sizeof(d->err), "cannot convert stamps: %s", strerror(errno));
			return -1;
		}
		d->convert_ns += fts_pkt_now(CLOCK_MONOTONIC) - t0;
	} else {
		for (uint32_t i = 0; i < n; i++)
			ns[i] = o->stamp == FTS_PKT_STAMP_NONE ? 0 : r->slots[(tail + i) & r->mask].ns;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct fts_pkt_slot *sl = &r->slots[(tail + i) & r->mask];
		int both = o->both && o->stamp == FTS_PKT_STAMP_FAST;
		if (o->file) {
			struct fts_pkt_payload pl = { sl->data, sl->more, r->head_bytes, sl->caplen };
			if (both)
				snprintf(comment, sizeof(comment), "kernel_ns=%lld fast_minus_kernel_ns=%lld",
					 (long long)sl->ns, (long long)(ns[i] - sl->ns));
			if (fts_pkt_file_write(o->file, ns[i], &sl->src, &sl->dst, &pl, sl->len,
					       both ? comment : NULL)) {
				snprintf(d->err, sizeof(d->err), "write failed: %s", strerror(errno));
				publish_written(d, fts_pkt_file_records(o->file));
				return -1;
			}
		} else if (o->out) {
			print_ns(a, sizeof(a), ns[i]);
			fprintf(o->out, "%s %s -> %s len %u", a, fts_pkt_ep_format(&sl->src, s, sizeof(s)),
				fts_pkt_ep_format(&sl->dst, t, sizeof(t)), sl->len);
			if (both) {
				print_ns(b, sizeof(b), sl->ns);
				fprintf(o->out, " kernel %s fast-kernel %+lld ns", b,
					(long long)(ns[i] - sl->ns));
			}
			if (fputc('\n', o->out) == EOF) {
				snprintf(d->err, sizeof(d->err), "write failed: %s", strerror(errno));
				return -1;
			}
		}
	}
	if (o->file) {
		publish_written(d, fts_pkt_file_records(o->file));
	} else if (o->out) {
		/* Lines count once stdio has handed them on; one flush per run of up to
		 * FTS_PKT_RUN lines is cheap next to printing them. */
		if (fflush(o->out)) {
			snprintf(d->err, sizeof(d->err), "write failed: %s", strerror(errno));
			return -1;
		}
		publish_written(d, d->written + n);
	} else {
		publish_written(d, d->written + n);
	}
	return 0;
}

static void *drain_main(void *arg)
{
	struct drain *d = arg;
	struct fts_pkt_ring *r = d->ring;
	int napped = 0;          /* the ring was empty at the last look, too */
	uint32_t flushed = r->tail;  /* the tail at the last flush */
	int64_t last_flush = fts_pkt_now(CLOCK_MONOTONIC);

	for (;;) {
		uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		uint32_t tail = r->tail;
		if (head == tail) {
			if (__atomic_load_n(&d->done, __ATOMIC_ACQUIRE)) {
				/* done was set after the last head store: one more look. */
				if (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == tail)
					break;
				continue;
			}
			/* Idle: put what is buffered in the file, so a reader sees it soon;
			 * but not at every gap of a steady stream (see the top). */
			int64_t now = fts_pkt_now(CLOCK_MONOTONIC);
			if (d->o->file && tail != flushed &&
			    (napped || now - last_flush >= FTS_PKT_FLUSH_NS)) {
				int fe = fts_pkt_file_flush(d->o->file);
				int64_t t1 = fts_pkt_now(CLOCK_MONOTONIC);
				d->drain_ns += t1 - now;
				last_flush = t1;
				flushed = tail;
				publish_written(d, fts_pkt_file_records(d->o->file));
				if (fe) {
					snprintf(d->err, sizeof(d->err), "write failed: %s",
						 strerror(errno));
					__atomic_store_n(&d->failed, 1, __ATOMIC_RELEASE);
					break;
				}
			}
			struct timespec ts = { 0, FTS_PKT_DRAIN_NAP };
			nanosleep(&ts, NULL);
			napped = 1;
			continue;
		}
		napped = 0;
		uint32_t n = head - tail, to_wrap = r->mask + 1 - (tail & r->mask);
		if (n > FTS_PKT_RUN)
			n = FTS_PKT_RUN;
		if (n > to_wrap)
			n = to_wrap;
		int64_t t0 = fts_pkt_now(CLOCK_MONOTONIC);
		int fe = drain_run(d, tail, n);
		d->drain_ns += fts_pkt_now(CLOCK_MONOTONIC) - t0;
		if (fe) {
			__atomic_store_n(&d->failed, 1, __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(&r->tail, tail + n, __ATOMIC_RELEASE);
	}
	int64_t t0 = fts_pkt_now(CLOCK_MONOTONIC);
	if (!d->failed && d->o->file && fts_pkt_file_flush(d->o->file)) {
		snprintf(d->err, sizeof(d->err), "write failed: %s", strerror(errno));
		d->failed = 1;
	}
	if (d->o->file)
		publish_written(d, fts_pkt_file_records(d->o->file));
	if (!d->failed && d->o->out && fflush(d->o->out)) {
		snprintf(d->err, sizeof(d->err), "write failed: %s", strerror(errno));
		d->failed = 1;
	}
	d->drain_ns += fts_pkt_now(CLOCK_MONOTONIC) - t0;
	return NULL;
}

/* Addresses, drop count and kernel stamp from one datagram's control messages. */
static void parse_cmsgs(struct msghdr *m, struct fts_pkt_slot *sl, uint64_t *ovfl, int kern)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memset(&sl->dst.addr, 0, 10);
			sl->dst.addr.s6_addr[10] = sl->dst.addr.s6_addr[11] = 0xff;
			memcpy(&sl->dst.addr.s6_addr[12], &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			sl->dst.addr = pi.ipi6_addr;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			if (v > *ovfl)
				*ovfl = v;
		} else if (kern && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			sl->ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		} else if (kern && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING &&
			   !sl->ns) {
			struct timespec ts[3];
			memcpy(ts, CMSG_DATA(c), sizeof(ts));
			sl->ns = (int64_t)ts[0].tv_sec * 1000000000 + ts[0].tv_nsec;
		}
	}
}

double fts_pkt_rate(uint64_t n, int64_t ns)
{
	if (n == 0 || ns < FTS_PKT_RATE_MIN_NS)
		return -1;
	return (double)n * 1e9 / (double)ns;
}

char *fts_pkt_rate_format(double pps, char *buf, size_t size)
{
	if (pps < 0)
		snprintf(buf, size, "n/a");
	else
		snprintf(buf, size, "%.0f", pps);
	return buf;
}

void fts_pkt_stats_print(FILE *f, const char *prefix, const struct fts_pkt_stats *st,
			 double pps)
{
	char r[32];

	/* From the first batch to the last: waiting for traffic, before or after, is not
	 * receiving. The first batch only starts the clock; it came before it. */
	if (pps < 0 && st->first_ns)
		pps = fts_pkt_rate(st->packets - st->first_batch, st->last_ns - st->first_ns);
	fprintf(f, "%spackets %llu bytes %llu written %llu drops %llu (socket %llu, ring %llu) "
		   "%s packets/s\n", prefix, (unsigned long long)st->packets,
		(unsigned long long)st->bytes, (unsigned long long)st->written,
		(unsigned long long)(st->sock_drops + st->ring_drops),
		(unsigned long long)st->sock_drops, (unsigned long long)st->ring_drops,
		fts_pkt_rate_format(pps, r, sizeof(r)));
}

int fts_pkt_rx_run(const struct fts_pkt_rx_opts *o, struct fts_pkt_stats *st, char *err,
		   size_t errsz)
{
	uint32_t batch = o->batch, ring_slots = o->ring_slots;
	int use_ring = o->keep, kern = o->stamp == FTS_PKT_STAMP_KERNEL || o->both;
	struct fts_pkt_ring own, *ring = o->ring ? o->ring : &own;
	struct drain d;
	struct mmsghdr *msgs = NULL;
	struct iovec *iov = NULL;
	struct sockaddr_storage *names = NULL;
	uint8_t *ctl = NULL, *scratch = NULL;
	struct fts_pkt_slot *tmp = NULL;
	struct fts_pkt_ep local;
	struct sockaddr_storage ls;
	socklen_t lsl = sizeof(ls);
	pthread_t th;
	int have_thread = 0, rc = -1, fd = o->fd;
	int64_t t_end = 0, next_stats = 0, cpu0;
	uint64_t ovfl = 0, ovfl0 = 0;
	struct fts_pkt_stats last = { 0 };

	memset(st, 0, sizeof(*st));
	memset(&own, 0, sizeof(own));
	memset(&d, 0, sizeof(d));
	if (getsockname(fd, (struct sockaddr *)&ls, &lsl)) {
		snprintf(err, errsz, "getsockname: %s", strerror(errno));
		return -1;
	}
	fts_pkt_ep_from_sockaddr(&local, &ls);
	/* Drops already counted before we started are someone else's. */
	proc_drops(fd, &ovfl0);

	msgs = calloc(batch, sizeof(*msgs));
	iov = calloc((size_t)batch * 2, sizeof(*iov));
	names = calloc(batch, sizeof(*names));
	ctl = calloc(batch, FTS_PKT_CTL);
	tmp = calloc(batch, sizeof(*tmp));
	/* Scratch for datagrams nobody keeps: stats only, or the ring is full. */
	scratch = malloc(65536);
	if (!msgs || !iov || !names || !ctl || !tmp || !scratch) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	if (use_ring) {
		if (!o->ring && fts_pkt_ring_init(ring, ring_slots, o->file ? o->snaplen : 0)) {
			snprintf(err, errsz, "cannot allocate a ring of %u slots: %s", ring_slots,
				 strerror(errno));
			goto out;
		}
		d.o = o;
		d.ring = ring;
		sigset_t all, old;
		sigemptyset(&all);
		sigaddset(&all, SIGINT);
		sigaddset(&all, SIGTERM);
		/* Signals must interrupt recvmmsg in this thread, not land in the drain. */
		pthread_sigmask(SIG_BLOCK, &all, &old);
		int e = pthread_create(&th, NULL, drain_main, &d);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e) {
			snprintf(err, errsz, "pthread_create: %s", strerror(e));
			goto out;
		}
		have_thread = 1;
	}
	if (o->stamp == FTS_PKT_STAMP_FAST)
		fts_clock_start();

	st->start_ns = fts_pkt_now(CLOCK_MONOTONIC);
	if (o->duration > 0)
		t_end = st->start_ns + (int64_t)(o->duration * 1e9);
	next_stats = st->start_ns + 1000000000;
	last.end_ns = st->start_ns;
	cpu0 = thread_cpu_ns();

	for (;;) {
		struct fts_pkt_slot *slots;
		uint32_t want = batch, head = 0, dropping = 0;
		int n;

		if (*o->stop || (have_thread && __atomic_load_n(&d.failed, __ATOMIC_ACQUIRE)))
			break;
		if (o->count && st->packets >= o->count)
			break;
		if (t_end || o->stats_every) {
			int64_t now = fts_pkt_now(CLOCK_MONOTONIC);
			if (t_end && now >= t_end)
				break;
			if (o->stats_every && now >= next_stats) {
				struct fts_pkt_stats cur = *st;
				double secs = (double)(now - last.end_ns) / 1e9;
				cur.written = have_thread ? __atomic_load_n(&d.written, __ATOMIC_RELAXED) : 0;
				cur.sock_drops = ovfl > ovfl0 ? ovfl - ovfl0 : 0;
				fts_pkt_stats_print(stderr, "rx: ", &cur,
						    (double)(st->packets - last.packets) / secs);
				last.packets = st->packets;
				last.end_ns = now;
				next_stats += 1000000000;
				if (next_stats < now)
					next_stats = now + 1000000000;
			}
		}
		if (o->count && o->count - st->packets < want)
			want = (uint32_t)(o->count - st->packets);
		if (use_ring) {
			uint32_t fr = fts_pkt_ring_free_slots(ring);
			if (fr == 0 && o->full == FTS_PKT_FULL_WAIT) {
				/* Leave the datagrams in the socket buffer until the drain frees
				 * a slot (see the top). Stop, failure and --duration still end
				 * the run: they are looked at after each nap. */
				int64_t w0 = fts_pkt_now(CLOCK_MONOTONIC);
				struct timespec ts = { 0, FTS_PKT_WAIT_NAP };
				st->ring_waits++;
				while ((fr = fts_pkt_ring_free_slots(ring)) == 0 && !*o->stop &&
				       !__atomic_load_n(&d.failed, __ATOMIC_ACQUIRE) &&
				       !(t_end && fts_pkt_now(CLOCK_MONOTONIC) >= t_end))
					nanosleep(&ts, NULL);
				st->ring_wait_ns += fts_pkt_now(CLOCK_MONOTONIC) - w0;
				if (fr == 0)
					continue;
			}
			head = ring->head;
			if (fr == 0)
				dropping = 1;
			else if (fr < want)
				want = fr;
		}
		/* Two pieces per slot: its dense head, then the rest (ring.c). */
		size_t iovlen = 1;
		if (!use_ring || dropping) {
			slots = tmp;
			for (uint32_t i = 0; i < want; i++) {
				iov[2 * i].iov_base = scratch;
				iov[2 * i].iov_len = 0;
			}
		} else {
			slots = NULL;
			iovlen = ring->more_mem ? 2 : 1;
			for (uint32_t i = 0; i < want; i++) {
				struct fts_pkt_slot *sl = &ring->slots[(head + i) & ring->mask];
				iov[2 * i].iov_base = sl->data ? sl->data : scratch;
				iov[2 * i].iov_len = ring->head_bytes;
				iov[2 * i + 1].iov_base = sl->more;
				iov[2 * i + 1].iov_len = ring->slot_bytes - ring->head_bytes;
			}
		}
		for (uint32_t i = 0; i < want; i++) {
			struct msghdr *m = &msgs[i].msg_hdr;
			m->msg_name = &names[i];
			m->msg_namelen = sizeof(names[i]);
			m->msg_iov = &iov[2 * i];
			m->msg_iovlen = iovlen;
			m->msg_control = ctl + (size_t)i * FTS_PKT_CTL;
			m->msg_controllen = FTS_PKT_CTL;
			m->msg_flags = 0;
		}
		/* MSG_TRUNC: msg_len is the datagram's real length even when we keep less. */
		n = recvmmsg(fd, msgs, want, MSG_WAITFORONE | MSG_TRUNC, NULL);
		if (n < 0) {
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && o->stop_when_idle)
				break;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			snprintf(err, errsz, "recvmmsg: %s", strerror(errno));
			goto stop;
		}
		/* Each datagram's own stamp, as it comes out of the batch. */
		if (slots) {
			for (int i = 0; i < n; i++)
				slots[i].ns = 0;
		} else if (o->stamp == FTS_PKT_STAMP_FAST) {
			for (int i = 0; i < n; i++)
				fts_store_relaxed(&ring->slots[(head + i) & ring->mask].stamp);
		} else if (o->stamp == FTS_PKT_STAMP_CLOCK) {
			for (int i = 0; i < n; i++)
				ring->slots[(head + i) & ring->mask].ns = fts_pkt_now(CLOCK_REALTIME);
		}
		for (int i = 0; i < n; i++) {
			struct fts_pkt_slot *sl = slots ? &slots[i] : &ring->slots[(head + i) & ring->mask];
			uint32_t len = msgs[i].msg_len;
			if (o->stamp != FTS_PKT_STAMP_CLOCK)
				sl->ns = 0;
			sl->len = len;
			sl->caplen = len < ring->slot_bytes ? len : ring->slot_bytes;
			sl->dst = local;
			fts_pkt_ep_from_sockaddr(&sl->src, &names[i]);
			parse_cmsgs(&msgs[i].msg_hdr, sl, &ovfl, kern);
			st->bytes += len;
		}
		/* One clock read per batch, for packets/s; none per datagram. */
		if (n > 0) {
			st->last_ns = fts_pkt_now(CLOCK_MONOTONIC);
			if (!st->first_ns) {
				st->first_ns = st->last_ns;
				st->first_batch = (uint64_t)n;
			}
		}
		st->packets += (uint64_t)n;
		if (use_ring) {
			if (dropping)
				st->ring_drops += (uint64_t)n;
			else
				__atomic_store_n(&ring->head, head + (uint32_t)n, __ATOMIC_RELEASE);
		}
	}
	rc = 0;
stop:
	st->end_ns = fts_pkt_now(CLOCK_MONOTONIC);
	st->cpu_ns = thread_cpu_ns() - cpu0;
	if (have_thread) {
		__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		have_thread = 0;
		st->written = d.written;
		st->convert_ns = d.convert_ns;
		st->drain_ns = d.drain_ns;
		if (d.failed) {
			snprintf(err, errsz, "%s", d.err);
			rc = -1;
		}
	}
	{
		uint64_t pd = 0;
		if (!proc_drops(fd, &pd) && pd > ovfl)
			ovfl = pd;
		st->sock_drops = ovfl > ovfl0 ? ovfl - ovfl0 : 0;
	}
out:
	if (have_thread) {
		__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	if (ring == &own)
		fts_pkt_ring_free(&own);
	free(msgs);
	free(iov);
	free(names);
	free(ctl);
	free(tmp);
	free(scratch);
	return rc;
}
