/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM's event filters as the operator handles them: read either
 * (KVMPFM_GET_EVENT_FILTER), set or clear the operator's
 * (KVMPFM_SET_EVENT_FILTER) from a filter file (lib/event_files.h, the
 * format QEMU's filter= reads).
 */
#ifndef HOST_TOOLS_OPERATOR_FILTER_H
#define HOST_TOOLS_OPERATOR_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/event_files.h"

/*
 * VM @vm_id's filter, the VMM's if @vmm, else the operator's: a
 * malloc'd copy (free()) with room for all its events, or NULL with
 * errno set and @err saying why.
 */
struct kvmpfm_event_filter *operator_filter_get(int fd, __u64 vm_id, bool vmm,
						char *err, size_t len);

/*
 * The operator's filter of VM @vm_id from the filter file @path ("-":
 * standard input); NULL @path clears it. 0; 1 for a file that cannot be
 * read or parsed, @err naming it (and its line); -1 when the module
 * refused, errno set and @err saying so.
 */
int operator_filter_set(int fd, __u64 vm_id, const char *path, char *err,
			size_t len);

/* @f as a filter file: what operator_filter_set() reads back as @f */
void operator_filter_print(FILE *out, const struct kvmpfm_event_filter *f);

#endif
