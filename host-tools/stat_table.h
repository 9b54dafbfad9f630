/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-perfmon-stat's table: a row per VM, its columns chosen, sorted and
 * printed by util-linux's libsmartcols (as lsblk and findmnt do: the
 * terminal's width, --raw, no heading). The columns are a table too:
 * their names and meanings in --help come from it.
 */
#ifndef HOST_TOOLS_STAT_TABLE_H
#define HOST_TOOLS_STAT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "snapshot.h"

struct stat_table_opts {
	unsigned int cols[32];	/* column indexes, in order */
	unsigned int nr_cols;
	int sort;		/* a column index, or -1: bind order */
	bool raw, noheadings;
};

/* the default columns, bind order */
void stat_table_defaults(struct stat_table_opts *o);
/*
 * @list: "NAME,PID,..." (case-insensitive), "+LIST" adds to the default.
 * 0, or -1 with a message in @err[@len].
 */
int stat_table_parse_output(struct stat_table_opts *o, const char *list,
			    char *err, size_t len);
/* @name: the column to sort by (numbers high first, NAME and UUID A-Z) */
int stat_table_parse_sort(struct stat_table_opts *o, const char *name,
			  char *err, size_t len);
/* every column and what it says, for --help and the man page */
const char *stat_table_columns_help(void);

/*
 * The table of @set on @f: with @prev, the reading @secs before it,
 * counts are per second and RUN% and DOORBELL% are over the interval.
 * 0, or -1 on no memory.
 */
int stat_table_print(FILE *f, const struct snap_set *set,
		     const struct snap_set *prev, double secs,
		     const struct stat_table_opts *o);

#endif /* HOST_TOOLS_STAT_TABLE_H */
