// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, L1's kernel log: the lines of concern since a mark
 * (hostlib.h, "L1's kernel log").
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hostlib.h"

int hl_klog_start(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

#define KLOG_MAX_RE	64

/* the rig's bad-patterns and HL_KLOG_EXTRA, compiled; how many, or -errno */
static int klog_patterns(regex_t *re)
{
	char line[512];
	int n = 0;
	size_t len;
	FILE *f = fopen(HL_BAD_PATTERNS, "r");

	if (!f)
		return -errno;
	while (n < KLOG_MAX_RE - 1 && fgets(line, sizeof(line), f)) {
		len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		if (regcomp(&re[n], line, REG_EXTENDED | REG_NOSUB)) {
			fprintf(stderr, "hostlib: bad pattern in %s: %s\n",
				HL_BAD_PATTERNS, line);
			continue;
		}
		n++;
	}
	fclose(f);
	if (!n)
		return -ENOENT;
	if (!regcomp(&re[n], HL_KLOG_EXTRA, REG_EXTENDED | REG_NOSUB))
		n++;
	return n;
}

int hl_klog_concerns(int fd, int show, const char *prefix)
{
	regex_t re[KLOG_MAX_RE];
	char rec[8192], *msg, *end;
	int nre, i, found = 0;
	ssize_t len;

	if (fd < 0)
		return fd;
	nre = klog_patterns(re);
	if (nre < 0)
		return nre;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		rec[len] = 0;
		/* "prio,seq,usec,flags;message\n" and " KEY=value" lines */
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = 0;
		for (i = 0; i < nre; i++)
			if (!regexec(&re[i], msg, 0, NULL, 0))
				break;
		if (i == nre)
			continue;
		if (found++ < show)
			printf("%s%s\n", prefix, msg);
	}
	for (i = 0; i < nre; i++)
		regfree(&re[i]);
	return found;
}
