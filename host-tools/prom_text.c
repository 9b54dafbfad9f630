// SPDX-License-Identifier: GPL-2.0
/*
 * Label values for Prometheus's text format (prom_text.h).
 */
#include "prom_text.h"

#define REPLACEMENT_CHARACTER	"\xef\xbf\xbd"	/* U+FFFD in UTF-8 */

/*
 * The length of the valid UTF-8 sequence at @s, or 0. The ranges are
 * Unicode's table of well-formed byte sequences (chapter 3, D92): they
 * leave out overlong forms, surrogates and code points past U+10FFFF.
 */
static unsigned int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	unsigned int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong below U+0800 */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates U+D800-U+DFFF */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong below U+10000 */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else {
		return 0;	/* a continuation byte, 0xc0, 0xc1, 0xf5-0xff */
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* a NUL ends the string here: it is no continuation byte */
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void prom_put_label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int n;

	while (*p) {
		n = utf8_len(p);
		if (!n) {
			fputs(REPLACEMENT_CHARACTER, f);
			p++;
			continue;
		}
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}
