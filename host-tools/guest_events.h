/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A guest's events by the names its users know: a virtual PMD by pfmon's
 * name for it (vcpu_run_ns), a PMU event by libpfm4's name in the tables
 * of the VM's personality (what `pfmon -l` lists in the guest:
 * RETIRED_INSTRUCTIONS, DATA_CACHE_REFILLS:L2_SHARED), an Intel fixed
 * counter by the architectural event it counts.
 */
#ifndef HOST_TOOLS_GUEST_EVENTS_H
#define HOST_TOOLS_GUEST_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "include/uapi/kvm_perfmon.h"

/*
 * Loads libpfm4's tables, once per process; a failure leaves the names
 * raw. Not thread-safe: call it before any thread names an event.
 */
void guest_events_init(void);

/*
 * The name of @e's guest event on @personality into @buf[@len]: as above,
 * else raw, "0xEVENT:0xUMASK", "fixed_N", "virtual_N".
 */
const char *guest_event_name(uint32_t personality,
			     const struct kvmpfm_snap_event *e, char *buf,
			     size_t len);

#endif /* HOST_TOOLS_GUEST_EVENTS_H */
