/* fuzz_events.c - libFuzzer target for an events block's records (evcodec.c): the
 * input's first byte chooses the layout (0: EVENTS, 1: EVENTS_PACKED, else
 * EVENTS_COMPACT), the rest is a block's payload. A payload is refused (EBADMSG) or
 * decodes to records whose fields past their count are zero and whose count is no
 * more than the payload can hold; a compact one, encoded again by the writer's
 * encoder, takes no more bytes than it did (the encoder writes the fewest) and decodes
 * to the same records. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t types[] = { FTS__BLK_EVENTS, FTS__BLK_EVENTS_PACKED,
					  FTS__BLK_EVENTS_COMPACT };
	struct fts__evrec *rec = NULL, *again = NULL;
	size_t cap = 0, cap2 = 0;
	uint32_t type;
	long n;

	if (size < 1)
		return 0;
	type = types[data[0] < 2 ? data[0] : 2];
	n = fts__events_decode(type, data + 1, size - 1, &rec, &cap);
	CHECK(n >= 0 || n == -EBADMSG || n == -ENOMEM);
	if (n < 0)
		goto out;
	CHECK((size_t)n <= (size - 1) / 2);
	for (long i = 0; i < n; i++)
		for (unsigned k = FTS__EV_NF(rec[i].head); k < FTS_EVENT_MAX_FIELDS; k++)
			CHECK(rec[i].f[k] == 0);
	if (type == FTS__BLK_EVENTS_COMPACT) {
		size_t room = FTS__EVENTS_HEAD_BYTES + (size_t)n * (FTS__COMPACT_MAX_BYTES + 8) + 8;
		unsigned char *b = malloc(room), *q;
		struct fts__compact_state s = { .have_type = 0 };
		CHECK(b != NULL);
		memcpy(b, data + 1, FTS__EVENTS_HEAD_BYTES);
		q = b + FTS__EVENTS_HEAD_BYTES;
		for (long i = 0; i < n; i++) {
			CHECK(FTS__EV_NF(rec[i].head) <= FTS_EVENT_MAX_FIELDS);
			q = fts__compact_put(q, &rec[i], &s);
		}
		CHECK((size_t)(q - b) <= size - 1);
		CHECK(fts__events_decode(type, b, (size_t)(q - b), &again, &cap2) == n);
		CHECK(n == 0 || memcmp(again, rec, (size_t)n * sizeof(*rec)) == 0);
		free(b);
	}
out:
	free(rec);
	free(again);
	return 0;
}
