/* fuzz_parse_word.c - libFuzzer target for fts__sysfs_parse_word (sysfs.c).
 *
 * Input: one byte for the output buffer's length, then the text (NUL-terminated in a
 * copy of exactly its size, so AddressSanitizer catches any read past it). Checked:
 * the result is 0 or -EINVAL; on 0 the output is the first whitespace-delimited word
 * of the text (non-empty, shorter than the buffer, followed in the text by whitespace
 * or the end); on -EINVAL the text holds no word or its first word does not fit; no
 * byte past the buffer's length is written. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "internal.h"
#include "sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len, skip = 0, wl = 0;
	char *text, *out;
	int rc;

	if (size < 1)
		return 0;
	len = data[0];
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	/* len bytes exactly (at least one, so malloc(0) is not a question). */
	out = malloc(len ? len : 1);
	memset(out, 0x5a, len ? len : 1);

	rc = fts__sysfs_parse_word(text, out, len);
	while (fuzz_space(text[skip]))
		skip++;
	while (text[skip + wl] && !fuzz_space(text[skip + wl]))
		wl++;
	if (rc == 0) {
		CHECK(wl > 0 && wl < len);
		CHECK(strlen(out) == wl && !memcmp(out, text + skip, wl));
	} else {
		CHECK(rc == -EINVAL);
		CHECK(wl == 0 || wl >= len);
		/* Nothing written on failure. */
		for (size_t i = 0; i < len; i++)
			CHECK(out[i] == 0x5a);
	}
	/* NULL arguments. */
	CHECK(fts__sysfs_parse_word(NULL, out, len) == -EINVAL);
	CHECK(fts__sysfs_parse_word(text, NULL, len) == -EINVAL);
	CHECK(fts__sysfs_parse_word(text, out, 0) == -EINVAL);
	free(out);
	free(text);
	return 0;
}
