/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's event time series, kept from scrape to scrape: a guest
 * event's host times summed per VM (or per VM and vCPU), each series
 * stable while the event exists and never going back.
 *
 * A snapshot lists the VM's events as records (one per vCPU, context,
 * set and PMD); they come and go with the guest's contexts, and their
 * times start again at 0 when a context's counters reopen. A series
 * keeps the times of its records that went away or started again, so
 * its counters only grow; it ends when none of its records is left.
 * At most EVENT_SERIES_MAX_NAMED event names per VM have series of their
 * own; a record of any other name is counted under "other" for its life,
 * so an event never moves between its series and "other".
 */
#ifndef HOST_TOOLS_EVENT_SERIES_H
#define HOST_TOOLS_EVENT_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

/*
 * A guest chooses its events; the operator's Prometheus must not grow
 * with its choices.
 */
#define EVENT_SERIES_MAX_NAMED	32
#define EVENT_SERIES_OTHER	"other"
#define EVENT_SERIES_ALL_VCPUS	UINT32_MAX
#define EVENT_SERIES_NAME_LEN	64

struct event_series {
	uint32_t vcpu;			/* or EVENT_SERIES_ALL_VCPUS */
	char event[EVENT_SERIES_NAME_LEN];
	bool named;			/* false: EVENT_SERIES_OTHER */
	uint64_t enabled_ns, running_ns;	/* as of the last update */
	/* private: the times of records gone or started again */
	uint64_t gone_enabled_ns, gone_running_ns;
	unsigned int live;		/* records in it */
};

struct event_series_record;

/* one VM's series, by module VM id */
struct event_series_vm {
	uint64_t id;
	struct event_series *series;
	unsigned int nr_series;
	/* private */
	struct event_series_record *records;	/* sorted by key */
	unsigned int nr_records;
	bool seen;
};

struct event_series_set {
	bool per_vcpu;		/* constant: a series per vCPU, else per VM */
	struct event_series_vm *vms;
	unsigned int nr_vms;
};

/*
 * Folds one read of the host (@set) into @es; VMs gone from it are
 * dropped. 0, or -1 on no memory (@es then stays as it was for the VMs
 * not yet folded and is still valid).
 */
int event_series_update(struct event_series_set *es,
			const struct snap_set *set);
/* the series of VM @id after the last update, or NULL */
const struct event_series_vm *event_series_vm(const struct event_series_set *es,
					      uint64_t id);
void event_series_free(struct event_series_set *es);

#endif /* HOST_TOOLS_EVENT_SERIES_H */
