/* capfile.c - pcap and pcapng writers.
 *
 * Records are assembled in a buffer that only ever holds whole records and written out
 * with write(2); when a write fails (full disk) the file is cut back to the end of the
 * last whole record, so whatever was written stays readable. Link type RAW (101): each
 * record starts with the IPv4 or IPv6 header we synthesise from the socket's view of the
 * datagram (source from recvmmsg, destination from IP_PKTINFO / IPV6_PKTINFO).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pkt.h"

#define FTS_PKT_LINKTYPE_RAW 101
#define FTS_PKT_BUF (256u << 10)   /* > the largest record: 64 KiB + headers + comment */
/* pcap's nanosecond-resolution magic; readers then take ts_usec as nanoseconds. */
#define FTS_PKT_PCAP_NS_MAGIC 0xa1b23c4du

struct fts_pkt_file {
	int fd;
	int is_stdout;
	int failed;              /* errno of the first failure, 0 if none */
	enum fts_pkt_format fmt;
	uint32_t snaplen;
	off_t committed;         /* file size holding only whole records */
	uint64_t records;        /* records in the committed part */
	uint64_t pending;        /* records in buf, not yet in the file */
	size_t used;
	uint8_t buf[];
};

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;
	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* The same sum as csum_add(0, p, n), up to a multiple of 0xffff, four bytes a step:
 * one's-complement sums do not depend on byte order, so sum native words and swap the
 * folded result (RFC 1071, 2.B). The drain checksums every payload it writes. */
static uint32_t csum_payload(const uint8_t *p, size_t n)
{
	uint64_t sum = 0;
	uint32_t w;
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		memcpy(&w, p + i, 4);
		sum += w;
	}
	if (i < n) {
		w = 0;
		memcpy(&w, p + i, n - i);    /* zero padding, as csum_add pads an odd byte */
		sum += w;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	sum = (uint16_t)(sum << 8 | sum >> 8);
#endif
	return (uint32_t)sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t fts_pkt_build_headers(uint8_t *hdr, const struct fts_pkt_ep *src,
			     const struct fts_pkt_ep *dst, const struct fts_pkt_payload *pl,
			     uint32_t len)
{
	int v4 = fts_pkt_ep_is_v4(src) && fts_pkt_ep_is_v4(dst);
	size_t ipl = v4 ? 20 : 40;
	uint8_t *udp = hdr + ipl;
	uint32_t ulen = 8 + len, sum;

	memset(hdr, 0, ipl + 8);
	if (v4) {
		hdr[0] = 0x45;                       /* version 4, 5 words */
		be16(hdr + 2, (uint16_t)(20 + ulen));
		hdr[6] = 0x40;                       /* don't fragment: we saw it whole */
		hdr[8] = 64;                         /* TTL: not known, a usual value */
		hdr[9] = IPPROTO_UDP;
		memcpy(hdr + 12, &src->addr.s6_addr[12], 4);
		memcpy(hdr + 16, &dst->addr.s6_addr[12], 4);
		be16(hdr + 10, csum_fold(csum_add(0, hdr, 20)));
	} else {
		hdr[0] = 0x60;
		be16(hdr + 4, (uint16_t)ulen);
		hdr[6] = IPPROTO_UDP;
		hdr[7] = 64;
		memcpy(hdr + 8, &src->addr, 16);
		memcpy(hdr + 24, &dst->addr, 16);
	}
	be16(udp, src->port);
	be16(udp + 2, dst->port);
	be16(udp + 4, (uint16_t)ulen);
	if (pl->caplen == len) {
		/* Pseudo-header: addresses, protocol, UDP length. */
		sum = v4 ? csum_add(0, hdr + 12, 8) : csum_add(0, hdr + 8, 32);
		sum += IPPROTO_UDP + ulen;
		sum = csum_add(sum, udp, 8);
		/* The ring splits payloads at an even offset: the words line up across. */
		if (pl->caplen <= pl->n0) {
			sum += csum_payload(pl->p0, pl->caplen);
		} else {
			sum += csum_payload(pl->p0, pl->n0);
			sum += csum_payload(pl->p1, pl->caplen - pl->n0);
		}
		uint16_t c = csum_fold(sum);
		be16(udp + 6, c ? c : 0xffff);       /* 0 means "no checksum" */
	}
	return ipl + 8;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Bytes of the buffer's first `upto` that end on a record boundary, and in *n how many
 * records they hold. The buffer always starts on one. */
static size_t whole_records(const struct fts_pkt_file *f, size_t upto, uint64_t *n)
{
	size_t off = 0, len;

	*n = 0;
	while (off + 16 <= f->used) {
		len = f->fmt == FTS_PKT_PCAP ? 16 + (size_t)get32(f->buf + off + 8)
					     : (size_t)get32(f->buf + off + 4);
		if (off + len > upto)
			break;
		off += len;
		++*n;
	}
	return off;
}

static int write_all(struct fts_pkt_file *f)
{
	size_t off = 0;

	while (off < f->used) {
		ssize_t w = write(f->fd, f->buf + off, f->used - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;
			uint64_t n = 0;
			/* Keep the whole records that made it; drop the part of one. Before
			 * the file header is in (committed 0) the buffer holds no records. */
			off_t keep = f->committed ? f->committed + (off_t)whole_records(f, off, &n)
						  : 0;
			if (!f->is_stdout && ftruncate(f->fd, keep) == 0)
				lseek(f->fd, keep, SEEK_SET);
			f->records += n;
			f->failed = e;
			f->pending = 0;
			f->used = 0;
			errno = e;
			return -1;
		}
		off += (size_t)w;
	}
	f->committed += (off_t)f->used;
	f->records += f->pending;
	f->pending = 0;
	f->used = 0;
	return 0;
}

int fts_pkt_file_flush(struct fts_pkt_file *f)
{
	if (f->failed) {
		errno = f->failed;
		return -1;
	}
	return write_all(f);
}

static int reserve(struct fts_pkt_file *f, size_t n)
{
	if (f->failed) {
		errno = f->failed;
		return -1;
	}
	if (f->used + n > FTS_PKT_BUF)
		return write_all(f);
	return 0;
}

struct fts_pkt_file *fts_pkt_file_open(const char *path, enum fts_pkt_format fmt,
				       uint32_t snaplen, int force)
{
	struct fts_pkt_file *f = calloc(1, sizeof(*f) + FTS_PKT_BUF);
	uint8_t *p;

	if (!f)
		return NULL;
	f->fmt = fmt;
	f->snaplen = snaplen;
	if (!strcmp(path, "-")) {
		f->fd = STDOUT_FILENO;
		f->is_stdout = 1;
	} else {
		int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
		struct stat st;
		f->fd = open(path, flags, 0644);
		if (f->fd < 0) {
			int e = errno;
			/* O_EXCL says EEXIST for a directory too: name the real obstacle. */
			if (e == EEXIST && !stat(path, &st) && S_ISDIR(st.st_mode))
				e = EISDIR;
			free(f);
			errno = e;
			return NULL;
		}
	}
	p = f->buf;
	if (fmt == FTS_PKT_PCAP) {
		put32(p, FTS_PKT_PCAP_NS_MAGIC);
		put16(p + 4, 2);
		put16(p + 6, 4);
		put32(p + 8, 0);                     /* thiszone */
		put32(p + 12, 0);                    /* sigfigs */
		put32(p + 16, snaplen);
		put32(p + 20, FTS_PKT_LINKTYPE_RAW);
		f->used = 24;
	} else {
		/* Section header block: no options, section length unknown (-1). */
		put32(p, 0x0A0D0D0A);
		put32(p + 4, 28);
		put32(p + 8, 0x1A2B3C4D);
		put16(p + 12, 1);
		put16(p + 14, 0);
		memset(p + 16, 0xff, 8);
		put32(p + 24, 28);
		/* Interface description block with if_tsresol = 9: stamps count ns. */
		p += 28;
		put32(p, 1);
		put32(p + 4, 32);
		put16(p + 8, FTS_PKT_LINKTYPE_RAW);
		put16(p + 10, 0);
		put32(p + 12, snaplen);
		put16(p + 16, 9);                    /* if_tsresol */
		put16(p + 18, 1);
		p[20] = 9;                           /* 10^-9 s; 3 bytes of padding follow */
		p[21] = p[22] = p[23] = 0;
		put32(p + 24, 0);                    /* opt_endofopt */
		put32(p + 28, 32);
		f->used = 28 + 32;
	}
	if (write_all(f) < 0) {
		int e = errno;
		if (!f->is_stdout)
			close(f->fd);
		free(f);
		errno = e;
		return NULL;
	}
	return f;
}

int fts_pkt_file_write(struct fts_pkt_file *f, int64_t ns, const struct fts_pkt_ep *src,
		       const struct fts_pkt_ep *dst, const struct fts_pkt_payload *pl,
		       uint32_t len, const char *comment)
{
	uint8_t hdr[48];
	size_t hl = fts_pkt_build_headers(hdr, src, dst, pl, len);
	uint32_t orig = (uint32_t)hl + len;
	uint32_t incl = (uint32_t)hl + pl->caplen;
	size_t clen = 0, need;
	uint8_t *p;

	if (incl > f->snaplen)
		incl = f->snaplen;
	if (ns < 0)
		ns = 0;
	if (f->fmt == FTS_PKT_PCAP) {
		if (reserve(f, 16 + incl) < 0)
			return -1;
		p = f->buf + f->used;
		put32(p, (uint32_t)(ns / 1000000000));
		put32(p + 4, (uint32_t)(ns % 1000000000));
		put32(p + 8, incl);
		put32(p + 12, orig);
		p += 16;
		f->used += 16 + incl;
	} else {
		if (comment)
			clen = strlen(comment);
		if (clen > 65000)
			clen = 65000;
		size_t pad = (4 - incl % 4) % 4;
		size_t opts = clen ? 4 + clen + (4 - clen % 4) % 4 + 4 : 0;
		need = 28 + incl + pad + opts + 4;
		if (reserve(f, need) < 0)
			return -1;
		p = f->buf + f->used;
		put32(p, 6);                         /* enhanced packet block */
		put32(p + 4, (uint32_t)need);
		put32(p + 8, 0);                     /* interface 0 */
		put32(p + 12, (uint32_t)((uint64_t)ns >> 32));
		put32(p + 16, (uint32_t)(uint64_t)ns);
		put32(p + 20, incl);
		put32(p + 24, orig);
		uint8_t *o = p + 28 + incl;
		memset(o, 0, pad);
		o += pad;
		if (clen) {
			put16(o, 1);                 /* opt_comment */
			put16(o + 2, (uint16_t)clen);
			memcpy(o + 4, comment, clen);
			memset(o + 4 + clen, 0, (4 - clen % 4) % 4);
			o += 4 + clen + (4 - clen % 4) % 4;
			put32(o, 0);                 /* opt_endofopt */
			o += 4;
		}
		put32(o, (uint32_t)need);
		p += 28;
		f->used += need;
	}
	if (incl <= hl) {
		memcpy(p, hdr, incl);
	} else {
		uint32_t body = incl - (uint32_t)hl;
		memcpy(p, hdr, hl);
		if (body <= pl->n0) {
			memcpy(p + hl, pl->p0, body);
		} else {
			memcpy(p + hl, pl->p0, pl->n0);
			memcpy(p + hl + pl->n0, pl->p1, body - pl->n0);
		}
	}
	f->pending++;
	return 0;
}

int fts_pkt_file_close(struct fts_pkt_file *f)
{
	int rc = fts_pkt_file_flush(f), e = errno;

	if (!f->is_stdout && close(f->fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	free(f);
	if (rc)
		errno = e;
	return rc;
}

uint64_t fts_pkt_file_records(const struct fts_pkt_file *f)
{
	return f->records;
}
