/* ring.c - the ring's memory. Payload space is mapped with MAP_NORESERVE: recvmmsg
 * only touches the pages a datagram fills, so a ring sized for 64 KiB datagrams costs
 * little resident memory while packets are small. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pkt.h"

int fts_pkt_ring_init(struct fts_pkt_ring *r, uint32_t slots, uint32_t slot_bytes)
{
	uint32_t n = 1;

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
	if (slot_bytes) {
		r->mem_size = (size_t)n * slot_bytes;
		r->mem = mmap(NULL, r->mem_size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r->mem == MAP_FAILED) {
			free(r->slots);
			r->slots = NULL;
			r->mem = NULL;
			return -1;
		}
		for (uint32_t i = 0; i < n; i++)
			r->slots[i].data = r->mem + (size_t)i * slot_bytes;
	}
	return 0;
}

void fts_pkt_ring_free(struct fts_pkt_ring *r)
{
	if (r->mem)
		munmap(r->mem, r->mem_size);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}
