/* addr.c - ADDR:PORT parsing and printing, and endpoints as headers carry them. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

int fts_pkt_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port, *colon;
	char *end;
	unsigned long p;
	size_t hl;

	if (!s || !*s)
		goto bad;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			goto bad;
		hl = (size_t)(close - s - 1);
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hl);
		port = close + 2;
	} else {
		colon = strrchr(s, ':');
		/* A bare IPv6 address has more than one colon: it needs brackets. */
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad;
		hl = (size_t)(colon - s);
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
		port = colon + 1;
	}
	host[hl] = 0;
	if (!*port || *port < '0' || *port > '9')
		goto bad;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p > 65535)
		goto bad;
	memset(ss, 0, sizeof(*ss));
	if (s[0] != '[') {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a);
	}
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

char *fts_pkt_format_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	struct fts_pkt_ep ep;
	fts_pkt_ep_from_sockaddr(&ep, ss);
	return fts_pkt_ep_format(&ep, buf, size);
}

int fts_pkt_ep_is_v4(const struct fts_pkt_ep *ep)
{
	return IN6_IS_ADDR_V4MAPPED(&ep->addr);
}

void fts_pkt_ep_from_sockaddr(struct fts_pkt_ep *ep, const struct sockaddr_storage *ss)
{
	memset(ep, 0, sizeof(*ep));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		ep->addr.s6_addr[10] = 0xff;
		ep->addr.s6_addr[11] = 0xff;
		memcpy(&ep->addr.s6_addr[12], &a->sin_addr, 4);
		ep->port = ntohs(a->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		ep->addr = a->sin6_addr;
		ep->port = ntohs(a->sin6_port);
	}
}

char *fts_pkt_ep_format(const struct fts_pkt_ep *ep, char *buf, size_t size)
{
	char h[INET6_ADDRSTRLEN];

	if (fts_pkt_ep_is_v4(ep)) {
		inet_ntop(AF_INET, &ep->addr.s6_addr[12], h, sizeof(h));
		snprintf(buf, size, "%s:%u", h, ep->port);
	} else {
		inet_ntop(AF_INET6, &ep->addr, h, sizeof(h));
		snprintf(buf, size, "[%s]:%u", h, ep->port);
	}
	return buf;
}
