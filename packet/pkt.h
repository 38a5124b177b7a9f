/* pkt.h - the packet module: receive UDP, stamp each datagram for the cost of a
 * counter read, convert the stamps only when records are written or printed.
 *
 * Built over the public faststamp API and linked into the faststamp command only; the
 * library never depends on it. Internal to the tool: names are fts_pkt_.
 *
 *   addr.c     ADDR:PORT and [v6]:PORT parsing and printing
 *   capfile.c  pcap (nanosecond magic) and pcapng writers, with IPv4/IPv6 + UDP headers
 *   ring.c     single-producer single-consumer ring of received datagrams and raw stamps
 *   rxloop.c   the socket, the recvmmsg loop and the thread that drains the ring
 */
#ifndef FTS_PKT_H
#define FTS_PKT_H

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "faststamp.h"

/* A clock's reading in ns (the loops' own timing; the stamps are faststamp's). */
static inline int64_t fts_pkt_now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- addresses (addr.c) ---------------------------------------------------------- */

/* Parse "A.B.C.D:PORT" or "[V6]:PORT" into *ss (AF_INET or AF_INET6). V6 may carry a
 * scope, "%IF", an interface name or number; link-local V6 needs one. 0, or -1 with
 * errno EINVAL and what is wrong with s in err. */
int fts_pkt_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errsz);
/* 0 if ss can be sent to: not port 0, not the unspecified address. Else -1 with why in
 * err. */
int fts_pkt_check_dest(const struct sockaddr_storage *ss, char *err, size_t errsz);
/* "addr:port", "[addr]:port" or "[addr%if]:port" into buf. Returns buf. */
char *fts_pkt_format_addr(const struct sockaddr_storage *ss, char *buf, size_t size);

/* An endpoint as it appears in a header: IPv4 addresses are held as v4-mapped v6. */
struct fts_pkt_ep {
	struct in6_addr addr;
	uint16_t port;           /* host order */
};
int fts_pkt_ep_is_v4(const struct fts_pkt_ep *ep);
void fts_pkt_ep_from_sockaddr(struct fts_pkt_ep *ep, const struct sockaddr_storage *ss);
char *fts_pkt_ep_format(const struct fts_pkt_ep *ep, char *buf, size_t size);

/* ---- capture files (capfile.c) ---------------------------------------------------- */

enum fts_pkt_format { FTS_PKT_PCAP, FTS_PKT_PCAPNG };

struct fts_pkt_file;

/* Open path for writing ("-" is stdout). Refuses an existing file with EEXIST unless
 * force, and a directory with EISDIR either way. Writes the file header. NULL with errno
 * on failure. */
struct fts_pkt_file *fts_pkt_file_open(const char *path, enum fts_pkt_format fmt,
				       uint32_t snaplen, int force);
/* A datagram's payload as the ring holds it: the first n0 bytes at p0, the rest of
 * caplen at p1 (n0 == caplen: p1 unused). */
struct fts_pkt_payload {
	const uint8_t *p0, *p1;
	uint32_t n0, caplen;
};

/* Append one record: the datagram payload (pl->caplen bytes held of len sent) from src
 * to dst at ns since the epoch, behind synthesised IP and UDP headers. comment may be
 * NULL (pcapng only). Records are whole in the file or not there at all. 0 or -1.
 * Cost: the headers, a checksum over the payload and a copy into a 256 KiB buffer
 * that goes out in one write(2) when full or flushed. */
int fts_pkt_file_write(struct fts_pkt_file *f, int64_t ns, const struct fts_pkt_ep *src,
		       const struct fts_pkt_ep *dst, const struct fts_pkt_payload *pl,
		       uint32_t len, const char *comment);
/* Flush what is buffered. On failure the file is cut back to its last whole record. */
int fts_pkt_file_flush(struct fts_pkt_file *f);
/* Flush and close. 0, or -1 with errno if any write failed (f is freed either way). */
int fts_pkt_file_close(struct fts_pkt_file *f);
/* Records in the file: whole records that write(2) took, not those still buffered or
 * cut off by a failed write. */
uint64_t fts_pkt_file_records(const struct fts_pkt_file *f);

/* Build IP + UDP headers for a datagram into hdr (>= 48 bytes); returns their size.
 * The IPv4 header checksum is always valid; the UDP checksum is filled when the whole
 * payload is at hand (pl->caplen == len), else 0. */
size_t fts_pkt_build_headers(uint8_t *hdr, const struct fts_pkt_ep *src,
			     const struct fts_pkt_ep *dst, const struct fts_pkt_payload *pl,
			     uint32_t len);

/* ---- the ring (ring.c) ------------------------------------------------------------ */

enum fts_pkt_stamp { FTS_PKT_STAMP_NONE, FTS_PKT_STAMP_FAST, FTS_PKT_STAMP_CLOCK,
		     FTS_PKT_STAMP_KERNEL };

/* One received datagram. stamp is the raw fast stamp (FAST); ns holds clock or kernel
 * nanoseconds (CLOCK, KERNEL, and the kernel's stamp beside a fast one with --both). */
struct fts_pkt_slot {
	fast_timestamp_t stamp;
	int64_t ns;
	uint32_t len;            /* datagram payload length as sent */
	uint32_t caplen;         /* bytes of it held: in data, then in more */
	struct fts_pkt_ep src, dst;
	uint8_t *data;           /* the first head_bytes, in memory shared by all slots */
	uint8_t *more;           /* the rest of slot_bytes, touched only by long datagrams */
};

/* Default slots: 82 ms of datagrams at 200,000 a second, before the socket buffer. */
#define FTS_PKT_RING_DEFAULT 16384
/* Payload bytes a slot keeps densely: an Ethernet MTU's datagram (1472) fits. The
 * drain reads slot after slot, so dense payload keeps it on few pages; a 64 KiB slot
 * each would cost a page fault the first time round and a TLB miss every record. */
#define FTS_PKT_RING_HEAD 2048

/* Producer and consumer indices on their own cache lines: the receiver writes head,
 * the drain thread writes tail, neither writes the other's line. */
struct fts_pkt_ring {
	struct fts_pkt_slot *slots;
	uint8_t *mem, *more_mem;
	size_t mem_size, more_size;
	uint32_t mask;
	uint32_t slot_bytes;         /* payload bytes a slot can hold */
	uint32_t head_bytes;         /* of them in data; slot_bytes - head_bytes in more */
	_Alignas(64) uint32_t head;  /* next slot the receiver fills */
	_Alignas(64) uint32_t tail;  /* next slot the drain reads */
};

/* slots rounded up to a power of two; slot_bytes of payload each (0: none kept). The
 * first FTS_PKT_RING_HEAD bytes of every slot are touched here, so that receiving
 * never faults on them: slots * min(slot_bytes, 2 KiB) resident from the start, the
 * rest reserved and touched only by datagrams longer than that. */
int fts_pkt_ring_init(struct fts_pkt_ring *r, uint32_t slots, uint32_t slot_bytes);
void fts_pkt_ring_free(struct fts_pkt_ring *r);

static inline uint32_t fts_pkt_ring_free_slots(const struct fts_pkt_ring *r)
{
	return r->mask + 1 - (r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE));
}

/* ---- the receive loop (rxloop.c) -------------------------------------------------- */

struct fts_pkt_stats {
	uint64_t packets, bytes;     /* datagrams taken from the socket */
	uint64_t written;            /* records in the file, or lines flushed to out */
	uint64_t sock_drops;         /* the kernel's count (SO_RXQ_OVFL, /proc/net/udp) */
	uint64_t ring_drops;         /* taken from the socket with the ring full */
	int64_t start_ns, end_ns;    /* CLOCK_MONOTONIC: start, end of the run */
	int64_t first_ns;            /* CLOCK_MONOTONIC after the first batch, 0: none */
	int64_t last_ns;             /* CLOCK_MONOTONIC after the last batch */
	uint64_t first_batch;        /* datagrams in the first batch */
	int64_t cpu_ns;              /* receive thread CPU (getrusage RUSAGE_THREAD) */
	int64_t convert_ns;          /* drain thread time spent in fts_convert_array */
	int64_t drain_ns;            /* drain thread time spent on records: convert, build,
				      * write(2); idle time not counted */
	uint64_t ring_waits;         /* times the receiver found the ring full and waited */
	int64_t ring_wait_ns;        /* CLOCK_MONOTONIC spent waiting so */
};

/* What the receiver does when the ring is full. WAIT: it takes nothing more from the
 * socket until the drain frees a slot; datagrams wait in the socket buffer (--rcvbuf),
 * and their stamps are taken when they come out, late by the wait; the kernel drops
 * (and counts) only once that buffer is full too. DROP: it keeps emptying the socket,
 * stamps on time, and drops what the ring cannot take (ring drops). */
enum fts_pkt_full { FTS_PKT_FULL_WAIT, FTS_PKT_FULL_DROP };

struct fts_pkt_rx_opts {
	int fd;                      /* a socket from fts_pkt_rx_socket() */
	uint64_t count;              /* stop after this many datagrams; 0: no limit */
	double duration;             /* seconds; 0: no limit */
	uint32_t batch;
	uint32_t ring_slots;
	/* A fresh ring of ring_slots, slot_bytes snaplen with file and 0 without, made
	 * before the socket so that its memory is touched before traffic comes; or NULL:
	 * fts_pkt_rx_run makes one. The caller frees it. */
	struct fts_pkt_ring *ring;
	enum fts_pkt_full full;
	uint32_t snaplen;
	enum fts_pkt_stamp stamp;
	int both;                    /* kernel stamp beside the fast one */
	int stats_every;             /* print stats each second */
	int keep;                    /* 1: records go to file or out; 0: drain only counts */
	struct fts_pkt_file *file;   /* records go here, or */
	FILE *out;                   /* printed here as text, or neither */
	int stop_when_idle;          /* stop when the socket stays empty for 100 ms */
	volatile int *stop;          /* set by signal handlers */
};

/* Open, bind and configure a UDP socket for receiving in a mode. -1 with errno and a
 * message in err on failure. */
int fts_pkt_rx_socket(const struct sockaddr_storage *ss, socklen_t len,
		      enum fts_pkt_stamp stamp, int both, int rcvbuf, char *err, size_t errsz);
/* Receive until count, duration, or *stop. 0, or -1 with a message in err (the file
 * has been flushed as far as it could be). */
int fts_pkt_rx_run(const struct fts_pkt_rx_opts *o, struct fts_pkt_stats *st, char *err,
		   size_t errsz);
/* One line: totals so far, and packets/s (pps < 0: over the whole run, fts_pkt_rate). */
void fts_pkt_stats_print(FILE *f, const char *prefix, const struct fts_pkt_stats *st,
			 double pps);

/* A rate needs time to mean anything: over a few microseconds, three datagrams make
 * millions per second. */
#define FTS_PKT_RATE_MIN_NS 10000000
/* Datagrams per second: n that came (or went) within ns after the first batch. -1 (no
 * rate) when n is 0 or ns is under FTS_PKT_RATE_MIN_NS. */
double fts_pkt_rate(uint64_t n, int64_t ns);
/* "%.0f", or "n/a" for a negative pps. Returns buf. */
char *fts_pkt_rate_format(double pps, char *buf, size_t size);

/* ---- the sender (tx.c) ----------------------------------------------------------- */

/* Bytes 0..7: sequence number, 8..15: CLOCK_REALTIME ns at send, both little-endian;
 * the rest is (seq + i) & 0xff. Shorter datagrams carry what fits. */
#define FTS_PKT_TX_HDR 16

struct fts_pkt_tx_opts {
	const struct sockaddr_storage *to;
	socklen_t to_len;
	uint64_t count;
	double rate;                 /* packets/s; 0: as fast as the socket takes them */
	uint32_t size;               /* payload bytes */
	uint32_t batch;              /* datagrams per sendmmsg */
	volatile int *stop;
};

struct fts_pkt_tx_stats {
	uint64_t sent, bytes, retries;
	int64_t start_ns, end_ns;    /* CLOCK_MONOTONIC: start, end of the run */
	int64_t first_ns;            /* CLOCK_MONOTONIC after the first sendmmsg, 0: none */
	int64_t last_ns;             /* CLOCK_MONOTONIC after the last sendmmsg */
	uint64_t first_batch;        /* datagrams the first sendmmsg sent */
};

/* Send count datagrams to o->to with sendmmsg at a steady rate. 0, or -1 with a
 * message in err. */
int fts_pkt_tx_run(const struct fts_pkt_tx_opts *o, struct fts_pkt_tx_stats *st, char *err,
		   size_t errsz);

#endif
