/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One scrape shared by every request within a short interval: the rate
 * of the module's snapshots (each takes the module's list lock and every
 * VM's lock in turn) is bounded by the exporter, not by how often the
 * network asks. One read at a time: requests that find the scrape stale
 * while another request reads wait for that read and share its result.
 */
#ifndef HOST_TOOLS_SCRAPE_CACHE_H
#define HOST_TOOLS_SCRAPE_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scrape_cache;

/* one scrape's exposition text, shared by reference */
struct scrape {
	char *text;
	size_t len;
	char *gz;		/* @text gzip'ed (malloc'ed), or NULL */
	size_t gz_len;
	int exit_code;		/* SNAP_EXIT_* of its read */
	uint64_t taken_ns;	/* set by the cache: when its read ended */
	struct scrape_cache *cache;
	unsigned int refs;	/* under cache->lock */
};

/* a new scrape (text malloc'ed, refs 0), NULL on no memory */
typedef struct scrape *scrape_read_fn(void *arg);
/* a monotonic clock, in ns */
typedef uint64_t scrape_clock_fn(void);

struct scrape_cache {
	uint64_t max_age_ns;	/* a scrape older than this is read again */
	scrape_read_fn *read;
	void *arg;
	scrape_clock_fn *now_ns;
	pthread_mutex_t lock;
	pthread_cond_t read_done;
	/* under @lock: */
	struct scrape *cur;	/* the newest, with a reference; or NULL */
	bool reading;		/* a request is in @read (with @lock dropped) */
};

void scrape_cache_init(struct scrape_cache *c, uint64_t max_age_ns,
		       scrape_read_fn *read, void *arg,
		       scrape_clock_fn *now_ns);
/* drops the cache's reference; the scrapes still held stay valid */
void scrape_cache_destroy(struct scrape_cache *c);

/*
 * The newest scrape if younger than max_age_ns, else a new one (read
 * once for all the requests that wait), with a reference for the caller;
 * NULL if a read failed for lack of memory.
 */
struct scrape *scrape_cache_get(struct scrape_cache *c);
void scrape_put(struct scrape *s);

/* CLOCK_MONOTONIC in ns: the clock to give scrape_cache_init */
uint64_t scrape_clock_monotonic(void);

#endif /* HOST_TOOLS_SCRAPE_CACHE_H */
