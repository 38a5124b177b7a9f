/* faststamp tx - send numbered, time-stamped UDP datagrams at a steady rate. */
#include <signal.h>
#include <string.h>

#include "pkt.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp tx --to ADDR:PORT [--count N] [--rate PPS] [--size BYTES] [--batch N]\n"
	"  Send N UDP datagrams (default 1000) to ADDR:PORT ([v6]:PORT for IPv6) with\n"
	"  sendmmsg. Each payload starts with its sequence number and its CLOCK_REALTIME\n"
	"  send time in ns (8 bytes each, little-endian); the rest is (seq + offset) & 0xff.\n"
	"  --rate PPS     packets per second, steady (default 0: as fast as possible)\n"
	"  --size BYTES   payload size, 0..65507 (IPv6: 65527), default 64\n"
	"  --batch N      datagrams per sendmmsg call, 1..1024 (default 64)\n";

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
	char err[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--to") && i + 1 < argc) {
			if (fts_pkt_parse_addr(argv[++i], &to, &to_len))
				return fts_tool_usage_error("tx", usage, "bad address '%s' (ADDR:PORT or [V6]:PORT)", argv[i]);
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			if (fts_tool_parse_u64(argv[++i], 1, UINT64_MAX / 2, &count))
				return fts_tool_usage_error("tx", usage, "bad --count '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--rate") && i + 1 < argc) {
			if (fts_tool_parse_double(argv[++i], 0, 1e9, &rate))
				return fts_tool_usage_error("tx", usage, "bad --rate '%s' (0..1e9)", argv[i]);
		} else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			if (fts_tool_parse_u64(argv[++i], 0, 65527, &size))
				return fts_tool_usage_error("tx", usage, "bad --size '%s' (0..65507, IPv6 65527)", argv[i]);
		} else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
			if (fts_tool_parse_u64(argv[++i], 1, 1024, &batch))
				return fts_tool_usage_error("tx", usage, "bad --batch '%s' (1..1024)", argv[i]);
		} else {
			return fts_tool_usage_error("tx", usage, "unknown or incomplete option '%s'", argv[i]);
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
	printf("tx: sent %llu packets %llu bytes in %.3f s (%.0f packets/s), %llu retries\n",
	       (unsigned long long)st.sent, (unsigned long long)st.bytes, secs,
	       secs > 0 ? (double)st.sent / secs : 0.0, (unsigned long long)st.retries);
	if (rc) {
		fprintf(stderr, "faststamp tx: %s\n", err);
		return 1;
	}
	return st.sent == count ? 0 : 1;
}
