// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's event series (event_series.h) and the guest event names
 * they carry (guest_events.h): series stay put while their events exist,
 * never go back, and stay within their bound per VM, whatever order the
 * module lists its records in, whatever records come and go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "event_series.h"
#include "fake_snap.h"
#include "guest_events.h"
#include "include/uapi/pv_perfmon.h"

#define MAX_EVENTS	8192

/* a snapshot of one VM being built: its records, in the module's format */
struct vm_build {
	struct kvmpfm_snap_vm vm;
	struct kvmpfm_snap_event ev[MAX_EVENTS];
};

static void vm_init(struct vm_build *b, uint64_t id, uint32_t personality)
{
	memset(b, 0, sizeof(*b));
	fake_snap_vm(&b->vm, id);
	b->vm.personality = personality;
}

/* a generic PMD counting event @event (umask 0) of context @ctx on @vcpu */
static void add_event(struct vm_build *b, uint32_t vcpu, uint32_t ctx,
		      uint16_t event, uint64_t ns)
{
	struct kvmpfm_snap_event *e = &b->ev[b->vm.nr_events++];

	assert_true(b->vm.nr_events <= MAX_EVENTS);
	memset(e, 0, sizeof(*e));
	e->vcpu = vcpu;
	e->ctx_id = ctx;
	e->pmd = event % 4;
	e->guest_kind = KVMPFM_EVK_GENERIC;
	e->guest_event = event;
	e->time_enabled = ns;
	e->time_running = ns / 2;
}

/* @b as the one VM of a host read into @set (free with snap_set_free) */
static void as_set(struct snap_set *set, const struct vm_build *b)
{
	size_t len = sizeof(b->vm) + b->vm.nr_events * sizeof(b->ev[0]);
	struct snap *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->buf = malloc(len);
	assert_non_null(s->buf);
	memcpy(s->buf, &b->vm, sizeof(b->vm));
	memcpy((char *)s->buf + sizeof(b->vm), b->ev,
	       b->vm.nr_events * sizeof(b->ev[0]));
	s->len = len;
	s->vm = b->vm;
	s->name = "vm";
	set->vms = s;
	set->nr = 1;
}

static void update(struct event_series_set *es, const struct vm_build *b)
{
	struct snap_set set;

	as_set(&set, b);
	assert_int_equal(event_series_update(es, &set), 0);
	snap_set_free(&set);
}

/* the series of @event ("other" included) on @vcpu of VM @id, or NULL */
static const struct event_series *series(const struct event_series_set *es,
					 uint64_t id, uint32_t vcpu,
					 const char *event)
{
	const struct event_series_vm *v = event_series_vm(es, id);

	for (unsigned int i = 0; v && i < v->nr_series; i++)
		if (v->series[i].vcpu == vcpu &&
		    !strcmp(v->series[i].event, event))
			return &v->series[i];
	return NULL;
}

static const char *name(uint32_t personality, uint32_t kind, uint16_t event,
			uint8_t umask)
{
	static char buf[EVENT_SERIES_NAME_LEN];
	struct kvmpfm_snap_event e = {
		.guest_kind = kind, .guest_event = event, .guest_umask = umask,
	};

	return guest_event_name(personality, &e, buf, sizeof(buf));
}

static void test_names_as_the_guest_knows_them(void **state)
{
	(void)state;
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_GENERIC, 0x76, 0),
			    "CPU_CLK_UNHALTED");
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_GENERIC, 0x42, 0x1f),
			    "DATA_CACHE_REFILLS:ALL");
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_GENERIC, 0x42, 0x06),
			    "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE");
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_GENERIC, 0x42, 0x20),
			    "DATA_CACHE_REFILLS:0x20");
	assert_string_equal(name(PVPFM_PERS_AMD64_K8, KVMPFM_EVK_GENERIC, 0xc0, 0),
			    "RETIRED_INSTRUCTIONS");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_GENERIC, 0x3c, 0),
			    "UNHALTED_CORE_CYCLES");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_GENERIC, 0x3c, 1),
			    "UNHALTED_REFERENCE_CYCLES");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_GENERIC, 0x2e, 0x41),
			    "LLC_MISSES");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_FIXED, 0, 0),
			    "INSTRUCTION_RETIRED");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_FIXED, 1, 0),
			    "UNHALTED_CORE_CYCLES");
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_VIRTUAL,
				 PVPFM_VPMD_VCPU_RUN_NS, 0), "vcpu_run_ns");
	/* what no table knows: raw */
	assert_string_equal(name(PVPFM_PERS_AMD64, KVMPFM_EVK_GENERIC, 0xfff, 0),
			    "0xfff:0x00");
	assert_string_equal(name(PVPFM_PERS_INTEL_ARCH, KVMPFM_EVK_FIXED, 7, 0),
			    "fixed_7");
	assert_string_equal(name(99, KVMPFM_EVK_GENERIC, 0x76, 0), "0x76:0x00");
}

/*
 * 33 events on 4 vCPUs: per VM 33 series (32 events and other), per vCPU
 * 4 x 33; 64 vCPUs: 33 and 64 x 33. Two time series each, enabled and
 * running, in the exposition.
 */
static void count_series(unsigned int vcpus, bool per_vcpu,
			 unsigned int want)
{
	static struct vm_build b;
	struct event_series_set es = { .per_vcpu = per_vcpu };

	vm_init(&b, 1, PVPFM_PERS_AMD64);
	for (uint32_t v = 0; v < vcpus; v++)
		for (uint16_t e = 0; e < 33; e++)
			add_event(&b, v, v, 0x100 + e, 1000);
	update(&es, &b);
	assert_int_equal(event_series_vm(&es, 1)->nr_series, want);
	printf("series: %u vCPUs x 33 events, %s: %u event series\n", vcpus,
	       per_vcpu ? "per vCPU" : "per VM", want * 2);
	event_series_free(&es);
}

static void test_series_per_vm_by_default(void **state)
{
	(void)state;
	count_series(4, false, 33);
	count_series(64, false, 33);
	count_series(4, true, 4 * 33);
	count_series(64, true, 64 * 33);
}

/*
 * The same 33 events listed in another order: each keeps its series, the
 * 33rd stays in other. One named event goes and a new one comes: the new
 * one takes the freed name; the one in other stays there, and other
 * never goes back.
 */
static void test_series_stable(void **state)
{
	static struct vm_build b;
	struct event_series_set es = { 0 };
	const struct event_series *s;
	uint64_t other;
	char raw[16];

	(void)state;
	vm_init(&b, 7, PVPFM_PERS_AMD64);
	for (uint16_t e = 0; e < 33; e++)
		add_event(&b, 0, e, 0xe00 + e, 1000);
	update(&es, &b);
	assert_non_null(series(&es, 7, EVENT_SERIES_ALL_VCPUS, "0xe00:0x00"));
	assert_null(series(&es, 7, EVENT_SERIES_ALL_VCPUS, "0xe20:0x00"));
	s = series(&es, 7, EVENT_SERIES_ALL_VCPUS, EVENT_SERIES_OTHER);
	assert_non_null(s);
	assert_int_equal(s->enabled_ns, 1000);

	/* reversed, and 0xe00 gone, 0xe21 new */
	vm_init(&b, 7, PVPFM_PERS_AMD64);
	add_event(&b, 0, 40, 0xe21, 10);
	for (uint16_t e = 32; e >= 1; e--)
		add_event(&b, 0, e, 0xe00 + e, 2000);
	update(&es, &b);
	assert_null(series(&es, 7, EVENT_SERIES_ALL_VCPUS, "0xe00:0x00"));
	for (uint16_t e = 1; e < 32; e++) {
		snprintf(raw, sizeof(raw), "0x%x:0x00", 0xe00 + e);
		s = series(&es, 7, EVENT_SERIES_ALL_VCPUS, raw);
		assert_non_null(s);
		assert_int_equal(s->enabled_ns, 2000);
	}
	assert_non_null(series(&es, 7, EVENT_SERIES_ALL_VCPUS, "0xe21:0x00"));
	s = series(&es, 7, EVENT_SERIES_ALL_VCPUS, EVENT_SERIES_OTHER);
	assert_non_null(s);
	assert_int_equal(s->enabled_ns, 2000);
	other = s->enabled_ns;

	/* the context of 0xe20 (in other) reopens: its times start at 0 */
	vm_init(&b, 7, PVPFM_PERS_AMD64);
	for (uint16_t e = 1; e < 32; e++)
		add_event(&b, 0, e, 0xe00 + e, 3000);
	add_event(&b, 0, 32, 0xe20, 5);
	add_event(&b, 0, 40, 0xe21, 20);
	update(&es, &b);
	s = series(&es, 7, EVENT_SERIES_ALL_VCPUS, EVENT_SERIES_OTHER);
	assert_int_equal(s->enabled_ns, other + 5);
	assert_int_equal(s->running_ns, other / 2 + 2);
	event_series_free(&es);
}

/*
 * An event on two vCPUs, one series per VM: a vCPU's record goes (its
 * context closed), the series keeps its time; the last goes, the series
 * ends; the VM goes, its series with it.
 */
static void test_gone_records_keep_their_time(void **state)
{
	static struct vm_build b;
	struct event_series_set es = { 0 };
	const struct event_series *s;

	(void)state;
	vm_init(&b, 3, PVPFM_PERS_AMD64);
	add_event(&b, 0, 1, 0x76, 100);
	add_event(&b, 1, 2, 0x76, 200);
	update(&es, &b);
	s = series(&es, 3, EVENT_SERIES_ALL_VCPUS, "CPU_CLK_UNHALTED");
	assert_non_null(s);
	assert_int_equal(s->enabled_ns, 300);

	vm_init(&b, 3, PVPFM_PERS_AMD64);
	add_event(&b, 1, 2, 0x76, 250);
	update(&es, &b);
	s = series(&es, 3, EVENT_SERIES_ALL_VCPUS, "CPU_CLK_UNHALTED");
	assert_non_null(s);
	assert_int_equal(s->enabled_ns, 350);

	vm_init(&b, 3, PVPFM_PERS_AMD64);
	update(&es, &b);
	assert_int_equal(event_series_vm(&es, 3)->nr_series, 0);

	{
		struct snap_set none = { 0 };

		assert_int_equal(event_series_update(&es, &none), 0);
		assert_null(event_series_vm(&es, 3));
	}
	event_series_free(&es);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_as_the_guest_knows_them),
		cmocka_unit_test(test_series_per_vm_by_default),
		cmocka_unit_test(test_series_stable),
		cmocka_unit_test(test_gone_records_keep_their_time),
	};

	guest_events_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
