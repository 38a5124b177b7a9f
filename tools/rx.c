/* faststamp rx - receive UDP datagrams, stamp each one, write pcap or pcapng.
 *
 * Also the comparison of stamping modes on the same traffic (--compare): a sender
 * thread feeds loopback while the receiver runs in each mode in turn, and the receive
 * thread's CPU time per packet is set side by side; then the drain's time per record
 * of a --write run, measured on the same traffic written to a scratch file.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkt.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp rx --listen ADDR:PORT [--count N] [--duration S] [--write FILE]\n"
	"                    [--snaplen N] [--force] [--stamp fast|clock|kernel|none] [--both]\n"
	"                    [--stats] [--batch N] [--ring N] [--full wait|drop]\n"
	"                    [--rcvbuf BYTES]\n"
	"       faststamp rx --compare [--listen ADDR:PORT] [--count N] [--chunk N]\n"
	"                    [--size BYTES] [--rounds N]\n"
	"  Receive UDP datagrams on ADDR:PORT ([V6]:PORT for IPv6, [V6%IF]:PORT with an\n"
	"  interface name or number for a link-local V6; port 0: one the kernel picks) until\n"
	"  N datagrams, S seconds (0.001..1e7), or SIGINT/SIGTERM. The address and port bound\n"
	"  go to stderr at start. Each datagram is stamped as it leaves the recvmmsg batch;\n"
	"  stamps are converted only when records are written or printed.\n"
	"  --write FILE   records to FILE: pcapng if it ends in .pcapng, else pcap with\n"
	"                 nanosecond stamps; '-' is stdout. Without --write (and without\n"
	"                 --stats) one line per datagram is printed.\n"
	"  --snaplen N    with --write: bytes kept per record, headers included, 1..262144\n"
	"                 (default 262144)\n"
	"  --force        with --write: overwrite an existing FILE (never a directory)\n"
	"  --stamp MODE   fast: a counter read per datagram (default); clock: clock_gettime;\n"
	"                 kernel: the kernel's receive stamp (SO_TIMESTAMPNS); none\n"
	"  --both         fast stamps with the kernel's beside them (pcapng comment, or in\n"
	"                 the printed lines)\n"
	"  --stats        packets, bytes, drops and packets/s every second; without --write\n"
	"                 no stamps are taken at all\n"
	"  --batch N      datagrams per recvmmsg, 1..1024 (default 64)\n"
	"  --ring N       datagrams waiting to be written, 1..16777216 (default 16384: with\n"
	"                 --write, 2 KiB of payload each, 32 MiB, resident from the start;\n"
	"                 longer datagrams touch more, reserved up to 64 KiB a slot)\n"
	"  --full MODE    with the ring full: wait (default): take nothing more from the\n"
	"                 socket until a slot is free, so datagrams wait in the socket\n"
	"                 buffer and are stamped late, and are dropped (socket drops) only\n"
	"                 once it is full too; drop: keep emptying the socket, stamps never\n"
	"                 late, and drop what the ring cannot take (ring drops)\n"
	"  --rcvbuf BYTES socket receive buffer, 0..1073741824 (default 8 MiB; 0: the\n"
	"                 kernel's default)\n"
	"  --compare      receive the same loopback traffic from an own sender in each mode\n"
	"                 (none, fast, clock, kernel) and print packets/s and the receive\n"
	"                 thread's CPU ns/packet. The sender queues a chunk, then the\n"
	"                 receiver empties the socket (defaults: 127.0.0.1:0, 200000\n"
	"                 datagrams, chunks of 1..1000000 (20000), 0..65507 bytes (64),\n"
	"                 1..16 rounds (3)); n/a for rounds under 10 ms. Then the same\n"
	"                 traffic with fast stamps written as pcap to a scratch file in\n"
	"                 $TMPDIR (or /tmp): the drain thread's ns/record (convert, build,\n"
	"                 write(2)). Takes only the options shown for it.\n"
	"Options with a value are given at most once. Stats go to stderr at exit: packets,\n"
	"bytes, records written (whole records in FILE, or lines printed), drops, and\n"
	"packets/s from the first batch of datagrams to the last (n/a when fewer than 2\n"
	"datagrams came or they came within 10 ms); then, if the ring was ever full with\n"
	"--full wait, how often and how long rx waited. Exit 0 when done, 1 on a fault\n"
	"(port in use, write failure: what was written stays readable), 2 on a usage error.\n";

static volatile int rx_stop;

static void on_signal(int sig)
{
	(void)sig;
	rx_stop = 1;
}

static const char *const mode_names[] = { "none", "fast", "clock", "kernel" };

static int parse_mode(const char *s, enum fts_pkt_stamp *m)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, mode_names[i])) {
			*m = (enum fts_pkt_stamp)i;
			return 0;
		}
	return -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* ---- --compare ----------------------------------------------------------------- */

struct result {
	double cpu_ns, pps, convert_ns, drain_ns;
	uint64_t packets, drops;
};

/* One mode: the sender fills the socket with a chunk, then the receiver empties it, so
 * every mode sees the same full batches and only the receive thread's CPU is counted.
 * With path, the records are written there as pcap (rx --write's defaults), for the
 * drain's time per record. */
static int compare_one(const struct sockaddr_storage *ls, socklen_t ll, enum fts_pkt_stamp m,
		       uint64_t count, uint64_t chunk, uint32_t size, const char *path,
		       struct result *res)
{
	struct sockaddr_storage to;
	socklen_t tol = sizeof(to);
	struct fts_pkt_stats st;
	struct fts_pkt_tx_stats ts;
	int64_t cpu = 0, conv = 0, drain = 0, rx_ns = 0;
	uint64_t written = 0;
	char err[256];
	struct fts_pkt_file *file = NULL;
	int fd = fts_pkt_rx_socket(ls, ll, m, 0, 256 << 20, err, sizeof(err));

	if (fd < 0) {
		fprintf(stderr, "faststamp rx: %s\n", err);
		return -1;
	}
	if (path && !(file = fts_pkt_file_open(path, FTS_PKT_PCAP, 262144, 1))) {
		fprintf(stderr, "faststamp rx: cannot write %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	getsockname(fd, (struct sockaddr *)&to, &tol);
	memset(res, 0, sizeof(*res));
	for (uint64_t done = 0; done < count && !rx_stop; done += chunk) {
		uint64_t n = count - done < chunk ? count - done : chunk;
		struct fts_pkt_tx_opts t = { .to = &to, .to_len = tol, .count = n, .size = size,
					     .batch = 64, .stop = &rx_stop };
		/* The ring is used in every mode, without payload: only the stamp differs. */
		struct fts_pkt_rx_opts o = { .fd = fd, .count = n, .batch = 64, .ring_slots = 65536,
					     .stamp = m, .keep = 1, .stop_when_idle = 1,
					     .stop = &rx_stop };
		if (file) {
			o.ring_slots = FTS_PKT_RING_DEFAULT;
			o.snaplen = 65536;
			o.file = file;
		}
		if (fts_pkt_tx_run(&t, &ts, err, sizeof(err)) ||
		    fts_pkt_rx_run(&o, &st, err, sizeof(err))) {
			fprintf(stderr, "faststamp rx: %s\n", err);
			if (file)
				fts_pkt_file_close(file);
			close(fd);
			return -1;
		}
		res->packets += st.packets;
		res->drops += st.sock_drops + st.ring_drops + (n - st.packets);
		cpu += st.cpu_ns;
		conv += st.convert_ns;
		drain += st.drain_ns;
		written += st.written;
		rx_ns += st.end_ns - st.start_ns;
	}
	close(fd);
	if (file && fts_pkt_file_close(file)) {
		fprintf(stderr, "faststamp rx: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	res->cpu_ns = res->packets ? (double)cpu / (double)res->packets : 0;
	/* Each run starts with the socket full, so all its datagrams count. */
	res->pps = fts_pkt_rate(res->packets, rx_ns);
	res->convert_ns = written ? (double)conv / (double)written : 0;
	res->drain_ns = written ? (double)drain / (double)written : 0;
	return 0;
}

static int run_compare(const struct sockaddr_storage *ls, socklen_t ll, uint64_t count,
		       uint64_t chunk, uint32_t size, uint64_t rounds)
{
	double cpu[4][16], pps[4][16], conv[16], drain[16], wconv[16];
	uint64_t pk[4] = { 0 }, dr[4] = { 0 }, wdrops = 0;
	struct result r;
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int tfd;

	/* A name of our own for the scratch file, removed again at once: compare_one
	 * truncates and rewrites it. */
	snprintf(path, sizeof(path), "%s/faststamp-compare.XXXXXX.pcap", tmp && *tmp ? tmp : "/tmp");
	tfd = mkstemps(path, 5);
	if (tfd < 0) {
		fprintf(stderr, "faststamp rx: cannot make a scratch file %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	close(tfd);

	printf("each mode receives %llu datagrams of %u bytes from an own sender on loopback,\n"
	       "in chunks of %llu queued first, modes interleaved, %llu rounds; medians:\n",
	       (unsigned long long)count, size, (unsigned long long)chunk,
	       (unsigned long long)rounds);
	for (uint64_t k = 0; k < rounds; k++) {
		for (int m = 0; m < 4; m++) {
			if (rx_stop ||
			    compare_one(ls, ll, (enum fts_pkt_stamp)m, count, chunk, size, NULL, &r)) {
				unlink(path);
				return 1;
			}
			cpu[m][k] = r.cpu_ns;
			pps[m][k] = r.pps;
			pk[m] += r.packets;
			dr[m] += r.drops;
			if (m == FTS_PKT_STAMP_FAST)
				conv[k] = r.convert_ns;
		}
		/* The drain's whole cost per record, as rx --write pays it. */
		if (rx_stop ||
		    compare_one(ls, ll, FTS_PKT_STAMP_FAST, count, chunk, size, path, &r)) {
			unlink(path);
			return 1;
		}
		drain[k] = r.drain_ns;
		wconv[k] = r.convert_ns;
		wdrops += r.drops;
	}
	unlink(path);
	double base = fts_tool_quantile_d(cpu[0], rounds, 0.5);
	/* A round too short for a rate is too short for CPU per packet as well: getrusage
	 * moves in scheduler ticks. */
	int too_short = 0;
	for (int m = 0; m < 4; m++)
		for (uint64_t k = 0; k < rounds; k++)
			too_short |= pps[m][k] < 0;
	printf("  %-7s %12s %14s %12s %16s %10s\n", "stamp", "packets/s", "CPU ns/packet",
	       "vs none", "stamp share", "drops");
	for (int m = 0; m < 4; m++) {
		double c = fts_tool_quantile_d(cpu[m], rounds, 0.5);
		double p = fts_tool_quantile_d(pps[m], rounds, 0.5);
		if (too_short)
			printf("  %-7s %12s %14s %12s %16s %10llu\n", mode_names[m], "n/a", "n/a",
			       "n/a", "n/a", (unsigned long long)dr[m]);
		else
			printf("  %-7s %12.0f %14.1f %+11.1f%% %15.1f%% %10llu\n", mode_names[m], p, c,
			       base > 0 ? 100.0 * (c - base) / base : 0.0,
			       c > 0 && m ? 100.0 * (c - base) / c : 0.0, (unsigned long long)dr[m]);
	}
	printf("  fast stamps converted by the reader: %.1f ns/packet, off the receive thread\n",
	       fts_tool_quantile_d(conv, rounds, 0.5));
	printf("  drain of rx --write (fast, pcap to %s): %.1f ns/record, of which convert\n"
	       "    %.1f ns (records assembled, checksummed, written in 256 KiB; drops %llu)\n",
	       tmp && *tmp ? tmp : "/tmp", fts_tool_quantile_d(drain, rounds, 0.5),
	       fts_tool_quantile_d(wconv, rounds, 0.5), (unsigned long long)wdrops);
	printf("  (CPU: the receive thread's getrusage; stamp share: (mode - none) / mode)\n");
	(void)pk;
	return 0;
}

/* ---- rx ------------------------------------------------------------------------ */

/* Options that take a value come first: each may be given once. Flags may repeat. */
enum { O_LISTEN, O_COUNT, O_DURATION, O_WRITE, O_SNAPLEN, O_BATCH, O_RING, O_RCVBUF, O_STAMP,
       O_CHUNK, O_SIZE, O_ROUNDS, O_FULL, O_FORCE, O_BOTH, O_STATS, O_COMPARE, O_N };
#define O_VALUED O_FORCE
static const char *const opt_names[O_N] = {
	[O_LISTEN] = "--listen", [O_COUNT] = "--count", [O_DURATION] = "--duration",
	[O_WRITE] = "--write", [O_SNAPLEN] = "--snaplen", [O_BATCH] = "--batch",
	[O_RING] = "--ring", [O_RCVBUF] = "--rcvbuf", [O_STAMP] = "--stamp",
	[O_CHUNK] = "--chunk", [O_SIZE] = "--size", [O_ROUNDS] = "--rounds",
	[O_FULL] = "--full", [O_FORCE] = "--force", [O_BOTH] = "--both",
	[O_STATS] = "--stats", [O_COMPARE] = "--compare",
};
#define BIT(k) (1u << (k))
/* What --compare takes; the rest would be ignored by it, so it refuses them. */
#define COMPARE_OPTS (BIT(O_LISTEN) | BIT(O_COUNT) | BIT(O_CHUNK) | BIT(O_SIZE) | \
		      BIT(O_ROUNDS) | BIT(O_COMPARE))

int fts_tool_rx(int argc, char **argv)
{
	struct sockaddr_storage ls;
	socklen_t ll = 0;
	uint64_t count = 0, snaplen = 262144, batch = 64, ring = FTS_PKT_RING_DEFAULT;
	uint64_t rcvbuf = 8 << 20;
	enum fts_pkt_full full = FTS_PKT_FULL_WAIT;
	uint64_t rounds = 3, size = 64, chunk = 20000;
	double duration = 0;
	const char *path = NULL;
	int force = 0, both = 0, stats = 0, compare = 0;
	enum fts_pkt_stamp stamp = FTS_PKT_STAMP_FAST;
	char err[512], msg[768];

	struct fts_tool_opts opts = FTS_TOOL_OPTS("rx", usage, opt_names, O_VALUED);
	for (int i = 1; i < argc; i++) {
		const char *v;
		int k = fts_tool_opt(&opts, argc, argv, &i, &v);
		if (k == FTS_OPT_ARG)
			return fts_tool_usage_error("rx", usage, "unexpected argument '%s'", v);
		if (k == FTS_OPT_END)
			continue;
		if (k < 0)
			return FTS_OPT_EXIT(k);
		switch (k) {
		case O_LISTEN:
			if (fts_pkt_parse_addr(v, &ls, &ll, err, sizeof(err))) {
				snprintf(msg, sizeof(msg), "bad address '%s': %s", v, err);
				return fts_tool_usage_error("rx", usage, "%s", msg);
			}
			break;
		case O_COUNT:
			if (fts_tool_parse_u64(v, 1, UINT64_MAX / 2, &count))
				return fts_tool_usage_error("rx", usage, "bad --count '%s' (1 or more)", v);
			break;
		case O_DURATION:
			if (fts_tool_parse_double(v, 0.001, 1e7, &duration))
				return fts_tool_usage_error("rx", usage, "bad --duration '%s' (0.001..1e7)", v);
			break;
		case O_WRITE:
			path = v;
			if (!*path)
				return fts_tool_usage_error("rx", usage, "%s", "--write needs a file name");
			break;
		case O_SNAPLEN:
			if (fts_tool_parse_u64(v, 1, 262144, &snaplen))
				return fts_tool_usage_error("rx", usage, "bad --snaplen '%s' (1..262144)", v);
			break;
		case O_BATCH:
			if (fts_tool_parse_u64(v, 1, 1024, &batch))
				return fts_tool_usage_error("rx", usage, "bad --batch '%s' (1..1024)", v);
			break;
		case O_RING:
			if (fts_tool_parse_u64(v, 1, 1u << 24, &ring))
				return fts_tool_usage_error("rx", usage, "bad --ring '%s' (1..16777216)", v);
			break;
		case O_RCVBUF:
			if (fts_tool_parse_u64(v, 0, 1u << 30, &rcvbuf))
				return fts_tool_usage_error("rx", usage, "bad --rcvbuf '%s' (0..1073741824)", v);
			break;
		case O_STAMP:
			if (parse_mode(v, &stamp))
				return fts_tool_usage_error("rx", usage, "bad --stamp '%s' (fast, clock, kernel, none)", v);
			break;
		case O_CHUNK:
			if (fts_tool_parse_u64(v, 1, 1000000, &chunk))
				return fts_tool_usage_error("rx", usage, "bad --chunk '%s' (1..1000000)", v);
			break;
		case O_SIZE:
			if (fts_tool_parse_u64(v, 0, 65507, &size))
				return fts_tool_usage_error("rx", usage, "bad --size '%s' (0..65507)", v);
			break;
		case O_ROUNDS:
			if (fts_tool_parse_u64(v, 1, 16, &rounds))
				return fts_tool_usage_error("rx", usage, "bad --rounds '%s' (1..16)", v);
			break;
		case O_FULL:
			if (!strcmp(v, "wait"))
				full = FTS_PKT_FULL_WAIT;
			else if (!strcmp(v, "drop"))
				full = FTS_PKT_FULL_DROP;
			else
				return fts_tool_usage_error("rx", usage, "bad --full '%s' (wait, drop)", v);
			break;
		case O_FORCE:
			force = 1;
			break;
		case O_BOTH:
			both = 1;
			break;
		case O_STATS:
			stats = 1;
			break;
		case O_COMPARE:
			compare = 1;
			break;
		}
	}
	/* An option that would be ignored is a mistake the user should hear about. */
	for (int k = 0; k < O_N; k++) {
		if (!(opts.seen & BIT(k)))
			continue;
		if (compare && !(COMPARE_OPTS & BIT(k)))
			return fts_tool_usage_error("rx", usage, "%s does not go with --compare", opt_names[k]);
		if (!compare && (k == O_CHUNK || k == O_SIZE || k == O_ROUNDS))
			return fts_tool_usage_error("rx", usage, "%s goes with --compare", opt_names[k]);
		if (!path && (k == O_SNAPLEN || k == O_FORCE))
			return fts_tool_usage_error("rx", usage, "%s goes with --write", opt_names[k]);
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: recvmmsg returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (compare) {
		if (!ll)
			fts_pkt_parse_addr("127.0.0.1:0", &ls, &ll, err, sizeof(err));
		return run_compare(&ls, ll, count ? count : 200000, chunk, (uint32_t)size, rounds);
	}
	if (!ll)
		return fts_tool_usage_error("rx", usage, "%s", "--listen ADDR:PORT is required");
	if (both && stamp != FTS_PKT_STAMP_FAST)
		return fts_tool_usage_error("rx", usage, "%s", "--both goes with --stamp fast");
	if (both && path && !ends_with(path, ".pcapng"))
		return fts_tool_usage_error("rx", usage, "%s", "--both needs a .pcapng file (or no --write)");
	if (stats && !path) {
		/* Nothing needs times: take none. */
		if ((opts.seen & BIT(O_STAMP) && stamp != FTS_PKT_STAMP_NONE) || both)
			fprintf(stderr, "faststamp rx: --stats without --write takes no stamps\n");
		stamp = FTS_PKT_STAMP_NONE;
		both = 0;
	}

	/* The ring first: touching its memory takes tens of ms, and traffic may come as
	 * soon as the socket is bound. A slot needs the payload part of a record at most. */
	uint32_t slot_snap = snaplen > 65536 ? 65536 : (uint32_t)snaplen;
	int keep = path || !stats;
	struct fts_pkt_ring ring_mem, *ringp = NULL;
	if (keep) {
		if (fts_pkt_ring_init(&ring_mem, (uint32_t)ring, path ? slot_snap : 0)) {
			fprintf(stderr, "faststamp rx: cannot allocate a ring of %llu slots: %s\n",
				(unsigned long long)ring, strerror(errno));
			return 1;
		}
		ringp = &ring_mem;
	}
	int fd = fts_pkt_rx_socket(&ls, ll, stamp, both, (int)rcvbuf, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "faststamp rx: %s\n", err);
		if (ringp)
			fts_pkt_ring_free(ringp);
		return 1;
	}
	struct fts_pkt_file *file = NULL;
	if (path) {
		enum fts_pkt_format fmt = ends_with(path, ".pcapng") ? FTS_PKT_PCAPNG : FTS_PKT_PCAP;
		file = fts_pkt_file_open(path, fmt, (uint32_t)snaplen, force);
		if (!file) {
			int e = errno;
			if (e == EISDIR)
				fprintf(stderr, "faststamp rx: cannot write %s: it is a directory "
					"(--write takes a file name)\n", path);
			else
				fprintf(stderr, "faststamp rx: cannot write %s: %s%s\n", path, strerror(e),
					e == EEXIST ? " (use --force to overwrite)" : "");
			close(fd);
			if (ringp)
				fts_pkt_ring_free(ringp);
			return 1;
		}
	}
	struct fts_pkt_rx_opts o = {
		.fd = fd, .count = count, .duration = duration, .batch = (uint32_t)batch,
		.ring_slots = (uint32_t)ring, .ring = ringp, .full = full, .snaplen = slot_snap,
		.stamp = stamp, .both = both, .stats_every = stats,
		.keep = keep, .file = file, .out = (!path && !stats) ? stdout : NULL,
		.stop = &rx_stop,
	};
	/* The port the kernel chose for port 0, and the address as the socket has it. */
	struct sockaddr_storage bound;
	socklen_t bl = sizeof(bound);
	char ba[96];
	if (getsockname(fd, (struct sockaddr *)&bound, &bl) == 0)
		fprintf(stderr, "faststamp rx: listening on %s\n",
			fts_pkt_format_addr(&bound, ba, sizeof(ba)));
	struct fts_pkt_stats st;
	int rc = fts_pkt_rx_run(&o, &st, err, sizeof(err));
	fts_pkt_stats_print(stderr, "rx: ", &st, -1);
	if (st.ring_waits)
		fprintf(stderr, "rx: the ring was full %llu times, %.3f ms in all: datagrams waited "
			"in the socket buffer and were stamped late by up to that (--full)\n",
			(unsigned long long)st.ring_waits, (double)st.ring_wait_ns / 1e6);
	if (file) {
		if (fts_pkt_file_close(file) && !rc) {
			snprintf(err, sizeof(err), "write failed: %s", strerror(errno));
			rc = -1;
		}
		if (rc)
			fprintf(stderr, "faststamp rx: %s: %s; the file keeps the records written "
				"before the failure\n", path, err);
	} else if (rc) {
		fprintf(stderr, "faststamp rx: %s\n", err);
	}
	close(fd);
	if (ringp)
		fts_pkt_ring_free(ringp);
	return rc ? 1 : 0;
}
