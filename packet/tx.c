/* tx.c - send numbered, time-stamped datagrams at a steady rate with sendmmsg.
 *
 * Packet i is due at start + i / rate; each pass sends, in one sendmmsg, every packet
 * that is due (up to a batch), then sleeps until the next one is. So the rate holds on
 * average even when a single call is late, and bursts never exceed one batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkt.h"

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int fts_pkt_tx_run(const struct fts_pkt_tx_opts *o, struct fts_pkt_tx_stats *st, char *err,
		   size_t errsz)
{
	uint32_t batch = o->batch, size = o->size;
	struct mmsghdr *msgs = calloc(batch, sizeof(*msgs));
	struct iovec *iov = calloc(batch, sizeof(*iov));
	uint8_t *bufs = malloc((size_t)batch * (size ? size : 1));
	int fd = -1, rc = -1, sndbuf = 4 << 20;
	char a[80];

	memset(st, 0, sizeof(*st));
	if (!msgs || !iov || !bufs) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	fd = socket(o->to->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (connect(fd, (const struct sockaddr *)o->to, o->to_len)) {
		snprintf(err, errsz, "cannot send to %s: %s",
			 fts_pkt_format_addr(o->to, a, sizeof(a)), strerror(errno));
		goto out;
	}
	st->start_ns = fts_pkt_now(CLOCK_MONOTONIC);
	while (st->sent < o->count && !*o->stop) {
		uint64_t n = o->count - st->sent;
		int64_t now = fts_pkt_now(CLOCK_MONOTONIC);
		if (n > batch)
			n = batch;
		if (o->rate > 0) {
			double due = (double)(now - st->start_ns) * o->rate / 1e9 + 1;
			uint64_t due_n = due > (double)o->count ? o->count : (uint64_t)due;
			if (due_n <= st->sent) {
				/* Sleep until a group is due, not one packet: a wake-up costs
				 * tens of us in a VM, so per-packet sleeps would cap the rate.
				 * A group spans at most 100 us and one batch. */
				double group = o->rate * 100e-6;
				uint64_t g = group < 1 ? 1 : group > batch ? batch : (uint64_t)group;
				int64_t at = st->start_ns +
					     (int64_t)((double)(st->sent + g - 1) * 1e9 / o->rate);
				struct timespec ts = { at / 1000000000, at % 1000000000 };
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
				continue;
			}
			if (due_n - st->sent < n)
				n = due_n - st->sent;
		}
		for (uint64_t i = 0; i < n; i++) {
			uint8_t *p = bufs + i * (size ? size : 1);
			uint64_t seq = st->sent + i;
			uint8_t hdr[FTS_PKT_TX_HDR];
			put_le64(hdr, seq);
			put_le64(hdr + 8, (uint64_t)fts_pkt_now(CLOCK_REALTIME));
			memcpy(p, hdr, size < FTS_PKT_TX_HDR ? size : FTS_PKT_TX_HDR);
			for (uint32_t j = FTS_PKT_TX_HDR; j < size; j++)
				p[j] = (uint8_t)(seq + j);
			iov[i].iov_base = p;
			iov[i].iov_len = size;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		int k = sendmmsg(fd, msgs, (unsigned)n, 0);
		if (k < 0) {
			/* Full queue, or the ICMP error of an earlier datagram (nobody listened
			 * yet): that datagram is gone, this one was not sent. Try again. */
			if (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED ||
			    errno == EINTR) {
				st->retries++;
				if (errno != ECONNREFUSED)
					usleep(50);
				continue;
			}
			snprintf(err, errsz, "sendmmsg: %s", strerror(errno));
			goto done;
		}
		/* Times for packets/s: a clock read per call, none per datagram. */
		if (k > 0) {
			st->last_ns = fts_pkt_now(CLOCK_MONOTONIC);
			if (!st->first_ns) {
				st->first_ns = st->last_ns;
				st->first_batch = (uint64_t)k;
			}
		}
		st->sent += (uint64_t)k;
		st->bytes += (uint64_t)k * size;
	}
	rc = 0;
done:
	st->end_ns = fts_pkt_now(CLOCK_MONOTONIC);
out:
	if (fd >= 0)
		close(fd);
	free(msgs);
	free(iov);
	free(bufs);
	return rc;
}
