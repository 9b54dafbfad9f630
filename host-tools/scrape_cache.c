// SPDX-License-Identifier: GPL-2.0
/*
 * The shared scrape (scrape_cache.h).
 */
#include <stdlib.h>
#include <time.h>

#include "scrape_cache.h"

void scrape_cache_init(struct scrape_cache *c, uint64_t max_age_ns,
		       scrape_read_fn *read, void *arg,
		       scrape_clock_fn *now_ns)
{
	c->max_age_ns = max_age_ns;
	c->read = read;
	c->arg = arg;
	c->now_ns = now_ns;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->read_done, NULL);
	c->cur = NULL;
	c->reading = false;
}

static void put_locked(struct scrape *s)
{
	if (--s->refs)
		return;
	free(s->text);
	free(s->gz);
	free(s);
}

void scrape_put(struct scrape *s)
{
	struct scrape_cache *c = s->cache;

	pthread_mutex_lock(&c->lock);
	put_locked(s);
	pthread_mutex_unlock(&c->lock);
}

static bool fresh(const struct scrape_cache *c)
{
	return c->cur && c->now_ns() - c->cur->taken_ns < c->max_age_ns;
}

struct scrape *scrape_cache_get(struct scrape_cache *c)
{
	struct scrape *s;

	pthread_mutex_lock(&c->lock);
	while (c->reading)
		pthread_cond_wait(&c->read_done, &c->lock);
	if (!fresh(c)) {
		c->reading = true;
		pthread_mutex_unlock(&c->lock);
		s = c->read(c->arg);
		pthread_mutex_lock(&c->lock);
		c->reading = false;
		pthread_cond_broadcast(&c->read_done);
		if (!s) {
			pthread_mutex_unlock(&c->lock);
			return NULL;
		}
		s->cache = c;
		s->taken_ns = c->now_ns();
		s->refs = 1;
		if (c->cur)
			put_locked(c->cur);
		c->cur = s;
	}
	s = c->cur;
	s->refs++;
	pthread_mutex_unlock(&c->lock);
	return s;
}

void scrape_cache_destroy(struct scrape_cache *c)
{
	pthread_mutex_lock(&c->lock);
	if (c->cur)
		put_locked(c->cur);
	c->cur = NULL;
	pthread_mutex_unlock(&c->lock);
}

uint64_t scrape_clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
