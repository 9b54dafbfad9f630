// SPDX-License-Identifier: GPL-2.0
/*
 * The operator's event filters (operator_filter.h). The module keeps at
 * most KVMPFM_MAX_FILTER events a filter, so one read with that room
 * always fits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "operator_filter.h"

static struct kvmpfm_event_filter *filter_alloc(void)
{
	return calloc(1, sizeof(struct kvmpfm_event_filter) +
		      KVMPFM_MAX_FILTER * sizeof(struct kvmpfm_filter_event));
}

struct kvmpfm_event_filter *operator_filter_get(int fd, __u64 vm_id, bool vmm,
						char *err, size_t len)
{
	struct kvmpfm_event_filter *f = filter_alloc();
	int saved;

	if (!f) {
		snprintf(err, len, "%s", strerror(errno));
		return NULL;
	}
	f->vm_id = vm_id;
	f->nr = KVMPFM_MAX_FILTER;
	f->flags = vmm ? KVMPFM_FILTER_OF_VMM : 0;
	if (!ioctl(fd, KVMPFM_GET_EVENT_FILTER, f))
		return f;
	saved = errno;
	snprintf(err, len, "reading the %s filter: %s%s",
		 vmm ? "VMM's" : "operator's", strerror(saved),
		 saved == ENOTTY ? " (a module older than this tool)" : "");
	free(f);
	errno = saved;
	return NULL;
}

/* the whole of @path, at most EVENT_FILE_MAX_SIZE + 1 bytes of it */
static char *read_file(const char *path, size_t *size, char *err, size_t len)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *text;
	int saved;

	if (!in) {
		saved = errno;
		snprintf(err, len, "%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	text = malloc(EVENT_FILE_MAX_SIZE + 1);
	*size = text ? fread(text, 1, EVENT_FILE_MAX_SIZE + 1, in) : 0;
	saved = !text ? errno : ferror(in) ? EIO : 0;
	if (in != stdin)
		fclose(in);
	if (saved) {
		snprintf(err, len, "%s: %s", path, strerror(saved));
		free(text);
		errno = saved;
		return NULL;
	}
	return text;
}

int operator_filter_set(int fd, __u64 vm_id, const char *path, char *err,
			size_t len)
{
	struct kvmpfm_event_filter *f = filter_alloc();
	struct event_file_error perr;
	char *text = NULL;
	size_t size;
	int ret = 1, saved = 0;

	if (!f) {
		snprintf(err, len, "%s", strerror(errno));
		return -1;
	}
	f->action = KVMPFM_FILTER_DENY;	/* of nothing: none */
	if (path) {
		text = read_file(path, &size, err, len);
		if (!text)
			goto out;
		if (event_filter_parse(text, size, f, &perr)) {
			if (perr.line)
				snprintf(err, len, "%s:%u: %s", path, perr.line,
					 perr.msg);
			else
				snprintf(err, len, "%s: %s", path, perr.msg);
			goto out;
		}
	}
	f->vm_id = vm_id;
	ret = ioctl(fd, KVMPFM_SET_EVENT_FILTER, f);
	if (ret)
		snprintf(err, len, "the module refused the filter: %s",
			 strerror(errno));
out:
	saved = errno;
	free(text);
	free(f);
	errno = saved;
	return ret;
}

void operator_filter_print(FILE *out, const struct kvmpfm_event_filter *f)
{
	char line[64];
	__u32 i;

	fprintf(out, "%s\n", event_filter_action_name(f->action) ?: "?");
	for (i = 0; i < f->nr; i++) {
		event_filter_line(&f->events[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}
