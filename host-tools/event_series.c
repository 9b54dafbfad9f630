// SPDX-License-Identifier: GPL-2.0
/*
 * Event time series across scrapes (event_series.h). Each update sorts
 * the snapshot's records by key and walks them beside the previous
 * update's: a record in both carries its series, one only in the old
 * list has gone, one only in the new list joins a series by its name.
 */
#include <stdlib.h>
#include <string.h>

#include "event_series.h"
#include "guest_events.h"

struct event_series_record {
	struct snap_event_key key;
	uint64_t enabled_ns, running_ns;
	unsigned int series;	/* index in the VM's series */
#define NO_SERIES	UINT32_MAX
	/* only while an update runs: the new record's name */
	const char *event;
};

static int record_cmp(const void *a, const void *b)
{
	return snap_event_key_cmp(&((const struct event_series_record *)a)->key,
				  &((const struct event_series_record *)b)->key);
}

static void vm_free(struct event_series_vm *v)
{
	free(v->series);
	free(v->records);
	v->series = NULL;
	v->records = NULL;
	v->nr_series = v->nr_records = 0;
}

static int find_series(const struct event_series_vm *v, uint32_t vcpu,
		       const char *event, bool named)
{
	for (unsigned int i = 0; i < v->nr_series; i++)
		if (v->series[i].vcpu == vcpu && v->series[i].named == named &&
		    !strcmp(v->series[i].event, event))
			return (int)i;
	return -1;
}

/*
 * May @event have a series of its own in @v: it has, or there is room
 * beside the names of the series records are in.
 */
static bool may_name(const struct event_series_vm *v, const char *event)
{
	unsigned int i, j, names = 0;

	for (i = 0; i < v->nr_series; i++) {
		if (!v->series[i].named)
			continue;
		if (!strcmp(v->series[i].event, event))
			return true;
		if (!v->series[i].live)
			continue;
		/* count each name once, at its first live series */
		for (j = 0; j < i && (!v->series[j].named ||
				      !v->series[j].live ||
				      strcmp(v->series[j].event,
					     v->series[i].event)); j++)
			;
		names += j == i;
	}
	return names < EVENT_SERIES_MAX_NAMED;
}

/* the series a new record of @event on @vcpu joins; -1 on no memory */
static int join_series(struct event_series_vm *v, bool per_vcpu,
		       uint32_t vcpu, const char *event)
{
	struct event_series *s;
	bool named = may_name(v, event);
	int i;

	if (!per_vcpu)
		vcpu = EVENT_SERIES_ALL_VCPUS;
	if (!named)
		event = EVENT_SERIES_OTHER;
	i = find_series(v, vcpu, event, named);
	if (i >= 0)
		return i;
	s = realloc(v->series, (v->nr_series + 1) * sizeof(*s));
	if (!s)
		return -1;
	v->series = s;
	s = &s[v->nr_series];
	memset(s, 0, sizeof(*s));
	s->vcpu = vcpu;
	s->named = named;
	strncpy(s->event, event, sizeof(s->event) - 1);
	return (int)v->nr_series++;
}

static void record_gone(struct event_series_vm *v,
			const struct event_series_record *r)
{
	struct event_series *s = &v->series[r->series];

	s->gone_enabled_ns += r->enabled_ns;
	s->gone_running_ns += r->running_ns;
}

/* the snapshot's records of @s, sorted, *@nr of them, named in @names */
static struct event_series_record *read_records(const struct snap *s,
						char (**names)[EVENT_SERIES_NAME_LEN],
						unsigned int *nr)
{
	const struct kvmpfm_snap_event *e;
	struct event_series_record *r;
	unsigned int i, n = s->vm.nr_events;

	r = calloc(n ? n : 1, sizeof(*r));
	*names = calloc(n ? n : 1, sizeof(**names));
	if (!r || !*names) {
		free(r);
		free(*names);
		return NULL;
	}
	for (i = 0; (e = snap_event(s, i)); i++) {
		r[i].key = snap_event_key(e);
		r[i].enabled_ns = e->time_enabled;
		r[i].running_ns = e->time_running;
		r[i].event = guest_event_name(s->vm.personality, e,
					      (*names)[i],
					      sizeof((*names)[i]));
	}
	qsort(r, i, sizeof(*r), record_cmp);
	*nr = i;
	return r;
}

/* drops the series no record is left in, and renumbers the records' */
static void end_series(struct event_series_vm *v)
{
	unsigned int i, n = 0, *to;

	to = calloc(v->nr_series ? v->nr_series : 1, sizeof(*to));
	if (!to)
		return;		/* kept for now, ended at the next update */
	for (i = 0; i < v->nr_series; i++) {
		if (!v->series[i].live)
			continue;
		to[i] = n;
		v->series[n++] = v->series[i];
	}
	v->nr_series = n;
	for (i = 0; i < v->nr_records; i++)
		v->records[i].series = to[v->records[i].series];
	free(to);
}

static int vm_update(struct event_series_vm *v, bool per_vcpu,
		     const struct snap *s)
{
	char (*names)[EVENT_SERIES_NAME_LEN];
	struct event_series_record *cur, *old = v->records;
	unsigned int i = 0, j = 0, nr;
	struct event_series *sr;
	int k, c;

	cur = read_records(s, &names, &nr);
	if (!cur)
		return -1;
	/* first the records that stay and those that went ... */
	while (i < nr || j < v->nr_records) {
		c = i == nr ? 1 : j == v->nr_records ? -1 :
		    snap_event_key_cmp(&cur[i].key, &old[j].key);
		if (c > 0) {
			record_gone(v, &old[j]);
			v->series[old[j++].series].live--;
			continue;
		}
		cur[i].series = NO_SERIES;
		if (!c) {
			cur[i].series = old[j].series;
			/* the context's counters opened again */
			if (cur[i].enabled_ns < old[j].enabled_ns ||
			    cur[i].running_ns < old[j].running_ns)
				record_gone(v, &old[j]);
			j++;
		}
		i++;
	}
	/* ... then the new ones, which may take the names that went */
	for (i = 0; i < nr; i++) {
		if (cur[i].series != NO_SERIES)
			continue;
		k = join_series(v, per_vcpu, cur[i].key.vcpu, cur[i].event);
		if (k < 0) {
			free(cur);
			free(names);
			return -1;
		}
		cur[i].series = k;
		v->series[k].live++;
	}
	for (i = 0; i < nr; i++)
		cur[i].event = NULL;
	free(names);
	free(old);
	v->records = cur;
	v->nr_records = nr;
	for (i = 0; i < v->nr_series; i++) {
		sr = &v->series[i];
		sr->enabled_ns = sr->gone_enabled_ns;
		sr->running_ns = sr->gone_running_ns;
	}
	for (i = 0; i < nr; i++) {
		sr = &v->series[cur[i].series];
		sr->enabled_ns += cur[i].enabled_ns;
		sr->running_ns += cur[i].running_ns;
	}
	end_series(v);
	return 0;
}

static struct event_series_vm *vm_get(struct event_series_set *es,
				      uint64_t id)
{
	struct event_series_vm *v;

	for (unsigned int i = 0; i < es->nr_vms; i++)
		if (es->vms[i].id == id)
			return &es->vms[i];
	v = realloc(es->vms, (es->nr_vms + 1) * sizeof(*v));
	if (!v)
		return NULL;
	es->vms = v;
	v = &v[es->nr_vms++];
	memset(v, 0, sizeof(*v));
	v->id = id;
	return v;
}

int event_series_update(struct event_series_set *es,
			const struct snap_set *set)
{
	struct event_series_vm *v;
	unsigned int i, n;
	int ret = 0;

	for (i = 0; i < es->nr_vms; i++)
		es->vms[i].seen = false;
	for (i = 0; i < set->nr; i++) {
		v = vm_get(es, set->vms[i].vm.id);
		if (!v) {
			ret = -1;
			continue;
		}
		v->seen = true;
		if (vm_update(v, es->per_vcpu, &set->vms[i])) {
			/* its series start again at the next update */
			vm_free(v);
			ret = -1;
		}
	}
	for (i = 0, n = 0; i < es->nr_vms; i++) {
		if (es->vms[i].seen)
			es->vms[n++] = es->vms[i];
		else
			vm_free(&es->vms[i]);
	}
	es->nr_vms = n;
	return ret;
}

const struct event_series_vm *event_series_vm(const struct event_series_set *es,
					      uint64_t id)
{
	for (unsigned int i = 0; i < es->nr_vms; i++)
		if (es->vms[i].id == id)
			return &es->vms[i];
	return NULL;
}

void event_series_free(struct event_series_set *es)
{
	for (unsigned int i = 0; i < es->nr_vms; i++)
		vm_free(&es->vms[i]);
	free(es->vms);
	es->vms = NULL;
	es->nr_vms = 0;
}
