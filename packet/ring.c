/* ring.c - the ring's memory.
 *
 * Each slot's payload is split. Its first FTS_PKT_RING_HEAD bytes lie in one dense
 * region, touched here before any traffic (with transparent huge pages where the
 * kernel gives them), so a burst of short datagrams neither faults nor walks a page per
 * record. The rest of each slot, up to 64 KiB, is mapped with MAP_NORESERVE: recvmmsg
 * touches those pages only for datagrams longer than the head.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pkt.h"

static uint8_t *map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int fts_pkt_ring_init(struct fts_pkt_ring *r, uint32_t slots, uint32_t slot_bytes)
{
	uint32_t n = 1, hb;
	long page = sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	if (slots == 0 || slots > (1u << 24)) {
		errno = EINVAL;
		return -1;
	}
	while (n < slots)
		n <<= 1;
	r->slots = calloc(n, sizeof(*r->slots));
	if (!r->slots)
		return -1;
	r->mask = n - 1;
	r->slot_bytes = slot_bytes;
	if (!slot_bytes)
		return 0;
	/* 8-byte multiples keep every slot's head aligned for the checksum's loads. */
	hb = slot_bytes < FTS_PKT_RING_HEAD ? (slot_bytes + 7) & ~7u : FTS_PKT_RING_HEAD;
	r->head_bytes = hb < slot_bytes ? hb : slot_bytes;
	r->mem_size = (size_t)n * hb;
	r->mem = map(r->mem_size);
	if (!r->mem)
		goto fail;
	/* Advice only: without huge pages the ring works the same, with more TLB misses. */
	(void)madvise(r->mem, r->mem_size, MADV_HUGEPAGE);
	for (size_t off = 0; off < r->mem_size; off += (size_t)(page > 0 ? page : 4096))
		r->mem[off] = 0;
	if (slot_bytes > r->head_bytes) {
		r->more_size = (size_t)n * (slot_bytes - r->head_bytes);
		r->more_mem = map(r->more_size);
		if (!r->more_mem)
			goto fail;
	}
	for (uint32_t i = 0; i < n; i++) {
		r->slots[i].data = r->mem + (size_t)i * hb;
		if (r->more_mem)
			r->slots[i].more = r->more_mem + (size_t)i * (slot_bytes - r->head_bytes);
	}
	return 0;
fail:
	fts_pkt_ring_free(r);
	errno = ENOMEM;
	return -1;
}

void fts_pkt_ring_free(struct fts_pkt_ring *r)
{
	if (r->mem)
		munmap(r->mem, r->mem_size);
	if (r->more_mem)
		munmap(r->more_mem, r->more_size);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}
