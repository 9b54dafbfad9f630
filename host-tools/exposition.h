/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's metrics in Prometheus's text exposition format, from
 * one read of the host (host_view.h).
 */
#ifndef HOST_TOOLS_EXPOSITION_H
#define HOST_TOOLS_EXPOSITION_H

#include "event_series.h"
#include "scrape_cache.h"

/* what the exporter keeps from scrape to scrape */
struct exposition {
	struct event_series_set events;	/* .per_vcpu: --collector.vcpu */
};

/*
 * Reads the host once and formats every metric: a scrape_read_fn, @arg
 * a struct exposition, which one read at a time may use. A failed read is kvmperfmon_up 0 in the text, its reason on
 * stderr, and its exit code in the scrape's exit_code. NULL on no memory.
 */
struct scrape *exposition_scrape(void *arg);

#endif /* HOST_TOOLS_EXPOSITION_H */
