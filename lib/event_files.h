/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The eventmap and filter files: the host administrator's event aliases
 * (KVMPFM_SET_EVENT_MAP) and an event filter (KVMPFM_SET_EVENT_FILTER) as
 * text. QEMU's pv-perfmon reads both (eventmap=, filter=) and
 * kvm-perfmon-stat reads and writes the operator's filter, with this one
 * parser: QEMU's build gets a copy of this file and event_files.c
 * (scripts/qemu-source.sh). QEMU's docs/system/devices/pv-perfmon.rst
 * gives both formats.
 *
 * Parsing is strict and bounded: EVENT_FILE_MAX_SIZE bytes of text,
 * EVENT_FILE_MAX_WORDS words a line, the uapi's entry limits; an error
 * names its line and field.
 */
#ifndef KVMPFM_EVENT_FILES_H
#define KVMPFM_EVENT_FILES_H

#include <stddef.h>

#if __has_include("standard-headers/kvm-perfmon/kvm_perfmon.h")
#include "standard-headers/kvm-perfmon/kvm_perfmon.h"	/* QEMU's tree */
#else
#include "include/uapi/kvm_perfmon.h"
#endif

#define EVENT_FILE_MAX_SIZE	(64 * 1024)
#define EVENT_FILE_MAX_WORDS	16
#define EVENT_FILE_MAX_LINE	1024

struct event_file_error {
	unsigned int line;	/* 0: the file as a whole */
	char msg[192];
};

/*
 * @text, @len bytes: into @map, which has room for KVMPFM_MAX_EVENT_MAP
 * entries. 0, or -1 with @err set.
 */
int event_map_parse(const char *text, size_t len,
		    struct kvmpfm_event_map *map, struct event_file_error *err);

/*
 * @text, @len bytes: into @filter (action, nr, events), which has room
 * for KVMPFM_MAX_FILTER events; vm_id and reserved are left alone. 0, or
 * -1 with @err set.
 */
int event_filter_parse(const char *text, size_t len,
		       struct kvmpfm_event_filter *filter,
		       struct event_file_error *err);

/* "allow", "deny", or NULL for no such action */
const char *event_filter_action_name(__u32 action);

/*
 * @e as its line of a filter file, without a newline, into @buf; as
 * snprintf. What event_filter_parse() reads back as @e.
 */
int event_filter_line(const struct kvmpfm_filter_event *e, char *buf,
		      size_t size);

#endif
