/* faststamp tx - send numbered, time-stamped UDP datagrams at a steady rate. */
#include <signal.h>
#include <string.h>

#include "pkt.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp tx --to ADDR:PORT [--count N] [--rate PPS] [--size BYTES] [--batch N]\n"
	"  Send N UDP datagrams (default 1000) to ADDR:PORT ([V6]:PORT for IPv6, [V6%IF]:PORT\n"
	"  with an interface name or number for a link-local V6) with sendmmsg. Port 0 and\n"
	"  the unspecified address (0.0.0.0, [::]) are no destinations. Each payload starts\n"
	"  with its sequence number and its CLOCK_REALTIME send time in ns (8 bytes each,\n"
	"  little-endian); the rest is (seq + offset) & 0xff.\n"
	"  --count N      datagrams to send, 1 or more (default 1000)\n"
	"  --rate PPS     packets per second, steady, 0..1e9 (default 0: as fast as possible)\n"
	"  --size BYTES   payload size, 0..65507 (IPv6: 65527), default 64\n"
	"  --batch N      datagrams per sendmmsg call, 1..1024 (default 64)\n"
	"Each option is given at most once. Prints what was sent and packets/s from the\n"
	"first sendmmsg to the last (n/a when that took under 10 ms). Exit 0 when all were\n"
	"sent, 1 on a fault, 2 on a usage error.\n";

/* Options, all taking a value. */
enum { OPT_TO, OPT_COUNT, OPT_RATE, OPT_SIZE, OPT_BATCH, OPT_N };
static const char *const names[OPT_N] = {
	[OPT_TO] = "--to", [OPT_COUNT] = "--count", [OPT_RATE] = "--rate", [OPT_SIZE] = "--size",
	[OPT_BATCH] = "--batch",
};

static volatile int tx_stop;

static void on_signal(int sig)
{
	(void)sig;
	tx_stop = 1;
}

int fts_tool_tx(int argc, char **argv)
{
	struct sockaddr_storage to;
	socklen_t to_len = 0;
	uint64_t count = 1000, size = 64, batch = 64;
	double rate = 0;
	char err[256], msg[512], r[32];

	struct fts_tool_opts opts = FTS_TOOL_OPTS("tx", usage, names, OPT_N);
	for (int i = 1; i < argc; i++) {
		const char *v;
		switch (fts_tool_opt(&opts, argc, argv, &i, &v)) {
		case OPT_TO:
			if (fts_pkt_parse_addr(v, &to, &to_len, err, sizeof(err)) ||
			    fts_pkt_check_dest(&to, err, sizeof(err))) {
				snprintf(msg, sizeof(msg), "bad address '%s': %s", v, err);
				return fts_tool_usage_error("tx", usage, "%s", msg);
			}
			break;
		case OPT_COUNT:
			if (fts_tool_parse_u64(v, 1, UINT64_MAX / 2, &count))
				return fts_tool_usage_error("tx", usage, "bad --count '%s' (1 or more)", v);
			break;
		case OPT_RATE:
			if (fts_tool_parse_double(v, 0, 1e9, &rate))
				return fts_tool_usage_error("tx", usage, "bad --rate '%s' (0..1e9)", v);
			break;
		case OPT_SIZE:
			if (fts_tool_parse_u64(v, 0, 65527, &size))
				return fts_tool_usage_error("tx", usage, "bad --size '%s' (0..65507, IPv6 65527)", v);
			break;
		case OPT_BATCH:
			if (fts_tool_parse_u64(v, 1, 1024, &batch))
				return fts_tool_usage_error("tx", usage, "bad --batch '%s' (1..1024)", v);
			break;
		case FTS_OPT_ARG:
			return fts_tool_usage_error("tx", usage, "unexpected argument '%s'", v);
		case FTS_OPT_END:
			break;
		case FTS_OPT_HELP:
			return 0;
		default:
			return 2;
		}
	}
	if (!to_len)
		return fts_tool_usage_error("tx", usage, "%s", "--to ADDR:PORT is required");
	if (to.ss_family == AF_INET && size > 65507)
		return fts_tool_usage_error("tx", usage, "%s", "--size: an IPv4 datagram holds at most 65507 bytes");

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct fts_pkt_tx_opts o = { .to = &to, .to_len = to_len, .count = count, .rate = rate,
				     .size = (uint32_t)size, .batch = (uint32_t)batch,
				     .stop = &tx_stop };
	struct fts_pkt_tx_stats st;
	int rc = fts_pkt_tx_run(&o, &st, err, sizeof(err));
	double secs = (double)(st.end_ns - st.start_ns) / 1e9;
	/* The first call only starts the clock: its datagrams went before it. */
	double pps = st.first_ns ? fts_pkt_rate(st.sent - st.first_batch, st.last_ns - st.first_ns)
				 : -1;
	printf("tx: sent %llu packets %llu bytes in %.3f s (%s packets/s), %llu retries\n",
	       (unsigned long long)st.sent, (unsigned long long)st.bytes, secs,
	       fts_pkt_rate_format(pps, r, sizeof(r)), (unsigned long long)st.retries);
	if (rc) {
		fprintf(stderr, "faststamp tx: %s\n", err);
		return 1;
	}
	return st.sent == count ? 0 : 1;
}
