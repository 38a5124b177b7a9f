/* addr.c - ADDR:PORT parsing and printing, and endpoints as headers carry them. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

static int bad(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return -1;
}

/* "%IF" after an IPv6 address: an interface name or number, as ping and ssh take it. */
static int parse_scope(const char *s, uint32_t *id, char *err, size_t errsz)
{
	char name[IF_NAMESIZE];
	char *end;
	unsigned long v;

	if (!*s)
		return bad(err, errsz, "no interface after '%%'");
	if (*s >= '0' && *s <= '9') {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end || v == 0 || v > UINT32_MAX || !if_indextoname((unsigned)v, name))
			return bad(err, errsz, "no interface number '%s'", s);
		*id = (uint32_t)v;
		return 0;
	}
	*id = if_nametoindex(s);
	if (!*id)
		return bad(err, errsz, "unknown interface '%s'", s);
	return 0;
}

int fts_pkt_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errsz)
{
	/* Room for an address, '%' and an interface name or number. */
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 1], *pct;
	const char *port;
	char *end;
	unsigned long p;
	size_t hl;
	int v6 = s && s[0] == '[';

	if (!s || !*s)
		return bad(err, errsz, "empty");
	if (v6) {
		const char *close = strchr(s, ']');
		if (!close)
			return bad(err, errsz, "no ']' after the IPv6 address");
		if (close[1] != ':')
			return bad(err, errsz, "no ':PORT' after ']'");
		hl = (size_t)(close - s - 1);
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon)
			return bad(err, errsz, "no ':PORT'");
		/* A bare IPv6 address has more than one colon: it needs brackets. */
		if (memchr(s, ':', (size_t)(colon - s)))
			return bad(err, errsz, "an IPv6 address goes in brackets, [V6]:PORT");
		hl = (size_t)(colon - s);
		port = colon + 1;
	}
	if (hl == 0)
		return bad(err, errsz, "no address before the port");
	if (hl >= sizeof(host))
		return bad(err, errsz, "the address is too long");
	memcpy(host, s + v6, hl);
	host[hl] = 0;
	if (!*port)
		return bad(err, errsz, "no port after ':'");
	errno = 0;
	p = strtoul(port, &end, 10);
	if (*port < '0' || *port > '9' || errno || *end || p > 65535)
		return bad(err, errsz, "port '%s' is not a number 0..65535", port);
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return bad(err, errsz,
				   "'%s' is not an IPv4 address (A.B.C.D; no host names)", host);
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		pct = strchr(host, '%');
		if (pct)
			*pct = 0;
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return bad(err, errsz, "'%s' is not an IPv6 address", host);
		if (pct && parse_scope(pct + 1, &a->sin6_scope_id, err, errsz))
			return -1;
		/* The kernel refuses these without an interface; say so before it does. */
		if (!pct && (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) ||
			     IN6_IS_ADDR_MC_LINKLOCAL(&a->sin6_addr) ||
			     IN6_IS_ADDR_MC_NODELOCAL(&a->sin6_addr)))
			return bad(err, errsz, "link-local '%s' needs an interface, [%s%%IF]:PORT",
				   host, host);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*len = sizeof(*a);
	}
	return 0;
}

int fts_pkt_check_dest(const struct sockaddr_storage *ss, char *err, size_t errsz)
{
	const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
	struct fts_pkt_ep ep;

	fts_pkt_ep_from_sockaddr(&ep, ss);
	if (ep.port == 0)
		return bad(err, errsz, "port 0 is not a destination");
	/* Linux would quietly send these to the local host. */
	if (ss->ss_family == AF_INET ? a->sin_addr.s_addr == INADDR_ANY
				     : IN6_IS_ADDR_UNSPECIFIED(&ep.addr))
		return bad(err, errsz, "the unspecified address is not a destination");
	return 0;
}

char *fts_pkt_format_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
	char h[INET6_ADDRSTRLEN], name[IF_NAMESIZE];
	struct fts_pkt_ep ep;

	fts_pkt_ep_from_sockaddr(&ep, ss);
	if (ss->ss_family != AF_INET6 || !a->sin6_scope_id)
		return fts_pkt_ep_format(&ep, buf, size);
	inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof(h));
	if (if_indextoname(a->sin6_scope_id, name))
		snprintf(buf, size, "[%s%%%s]:%u", h, name, ep.port);
	else
		snprintf(buf, size, "[%s%%%u]:%u", h, (unsigned)a->sin6_scope_id, ep.port);
	return buf;
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
