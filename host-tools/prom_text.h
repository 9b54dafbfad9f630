/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Label values in Prometheus's text exposition format: the format wants
 * valid UTF-8 with \, " and newline escaped, and Prometheus rejects a
 * whole scrape for one bad value. Names come from VMMs (a VM's -name is
 * whatever bytes its owner chose), so every value is repaired here.
 */
#ifndef HOST_TOOLS_PROM_TEXT_H
#define HOST_TOOLS_PROM_TEXT_H

#include <stdio.h>

/*
 * @s as a label value's text, without the quotes: \ " and newline
 * escaped; each byte that does not start a valid UTF-8 sequence (a stray
 * continuation, an overlong form, a surrogate, past U+10FFFF, a sequence
 * cut short) written as U+FFFD, the replacement character.
 */
void prom_put_label_value(FILE *f, const char *s);

#endif /* HOST_TOOLS_PROM_TEXT_H */
