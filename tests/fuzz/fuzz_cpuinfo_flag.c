/* fuzz_cpuinfo_flag.c - libFuzzer target for fts__sysfs_cpuinfo_has_flag (sysfs.c).
 *
 * Input: the flag up to the first newline (or the first 32 bytes), then the text. Both
 * are NUL-terminated copies of exactly their size, so AddressSanitizer catches reads
 * past them. Checked:
 *   - the result is 0 or 1, and 1 only if the flag is non-empty, holds no whitespace
 *     and occurs in the text on a line that starts with "flags";
 *   - a text whose first line is a "flags" line listing the flag (between other
 *     words, the fuzzed text after it) gives 1, and the same line without the flag
 *     gives 0 unless the fuzzed words already list it;
 *   - NULL arguments give 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "internal.h"
#include "sysfs.h"

static char *dup_n(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* A word of the fuzzed bytes: no whitespace, no NUL. */
static int plain_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (fuzz_space(*s))
			return 0;
	return 1;
}

/* Is word one of the space-separated words of list? */
static int listed(const char *list, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; *p;) {
		size_t n = 0;
		while (*p == ' ')
			p++;
		while (p[n] && p[n] != ' ')
			n++;
		if (n == wl && !memcmp(p, word, n))
			return 1;
		p += n;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < 33 ? size : 33);
	size_t fl = nl ? (size_t)(nl - data) : (size < 32 ? size : 32);
	size_t rest = size - fl - (nl ? 1 : 0);
	char *flag = dup_n(data, fl), *text = dup_n(data + size - rest, rest);
	int r = fts__sysfs_cpuinfo_has_flag(text, flag);

	CHECK(r == 0 || r == 1);
	if (r == 1) {
		const char *hit = strstr(text, flag);
		CHECK(plain_word(flag));
		CHECK(hit != NULL && strstr(text, "flags") != NULL);
	}
	CHECK(fts__sysfs_cpuinfo_has_flag(NULL, flag) == 0);
	CHECK(fts__sysfs_cpuinfo_has_flag(text, NULL) == 0);
	CHECK(fts__sysfs_cpuinfo_has_flag(text, "") == 0);

	/* Build a cpuinfo whose first flags line lists the flag among the fuzzed text's
	 * first line's words (with tabs and spaces as the kernel writes them). */
	if (plain_word(flag)) {
		const char *eol = strchr(text, '\n');
		size_t l1 = eol ? (size_t)(eol - text) : strlen(text);
		char *words = malloc(l1 + 1), *doc = malloc(l1 + fl + rest + 64);
		size_t wn = 0;

		/* The fuzzed first line, whitespace squeezed to single spaces. */
		for (size_t i = 0; i < l1; i++)
			words[wn++] = fuzz_space(text[i]) ? ' ' : text[i];
		words[wn] = '\0';

		sprintf(doc, "processor\t: 0\nflags\t\t: %s %s fpu\n%s", words, flag,
			eol ? eol + 1 : "");
		CHECK(fts__sysfs_cpuinfo_has_flag(doc, flag) == 1);
		sprintf(doc, "processor\t: 0\nflags\t\t: %s fpu\nflags\t\t: %s\n", words, flag);
		CHECK(fts__sysfs_cpuinfo_has_flag(doc, flag) == (listed(words, flag) || !strcmp(flag, "fpu")));
		free(words);
		free(doc);
	}
	free(flag);
	free(text);
	return 0;
}
