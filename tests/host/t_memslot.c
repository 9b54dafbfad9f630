// SPDX-License-Identifier: GPL-2.0
/*
 * t_memslot: issue 9 finding 6. A sampling buffer page follows the
 * guest's memslots: while a context samples into it, its memslot is made
 * read-only, deleted, re-created, and moved away with another memslot put
 * at its old address. After each change (KVM_SET_USER_MEMORY_REGION
 * returns after the last write through the old memslots: synchronize_srcu):
 *
 *   - the host memory behind a frame the guest no longer maps writable at
 *     the buffer's address is a canary: not one byte of it changes, while
 *     the module writes (or fails to write) samples (its samples and
 *     samples_lost grow: the test is not idle);
 *   - a frame the guest maps again gets the samples: the buffer's header
 *     counts them there, and KVM_GET_DIRTY_LOG of that memslot reports
 *     the page, as live migration needs.
 *
 * Sampling: VCPU_RUN_NS every 1 ms of the vCPU thread's CPU while it
 * burns CPU outside KVM_RUN (the deferred work writes on its return to
 * user mode); each phase RESTARTs the context (empty buffer, unmasked).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include "hostlib.h"

#define MS		1000000ULL
#define US		1000ULL
#define SLOT_BUF	1		/* the buffer's memslot */
#define SLOT_NEW	2		/* put at its address after the move */
#define BUF_GPA		(16UL << 20)	/* above the VM's RAM (slot 0) */
#define MOVED_GPA	(32UL << 20)
#define CANARY		0xa5
/* samples (written or lost) a phase waits for, and for how long */
#define PHASE_SAMPLES	3
#define PHASE_WAIT_NS	(30000 * MS)

static struct hl_vm vm;
static struct hl_vcpu *v;
static uint32_t ctx;
static uint8_t *page_b, *page_c;	/* host memory of the two memslots */

static int set_slot(uint32_t slot, uint64_t gpa, void *hva, uint32_t flags)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = hva ? HL_PAGE : 0,
		.userspace_addr = (uintptr_t)hva,
	};

	return HL_IOCTL(vm.vm_fd, KVM_SET_USER_MEMORY_REGION, &r);
}

/* KVM_GET_DIRTY_LOG of a one-page memslot (and clear it): 1 if dirty */
static int slot_dirty(uint32_t slot)
{
	uint64_t bm = 0;
	struct kvm_dirty_log log = { .slot = slot, .dirty_bitmap = &bm };

	if (ioctl(vm.vm_fd, KVM_GET_DIRTY_LOG, &log))
		return -errno;
	return bm & 1;
}

static int clear_log(uint32_t slot)
{
	int d = slot_dirty(slot);

	return d < 0 ? d : 0;
}

static bool intact(const uint8_t *p)
{
	size_t i;

	for (i = 0; i < HL_PAGE; i++)
		if (p[i] != CANARY)
			return false;
	return true;
}

static uint64_t hdr_count(const uint8_t *p)
{
	return ((const pfm_dfl_smpl_hdr_t *)p)->hdr_count;
}

/* on the vCPU thread: RESTART, then burn CPU (sampled) until told */
static volatile int burn_stop;

static int burn_fn(struct hl_vcpu *vc, void *unused)
{
	(void)unused;
	cb_restart(&vc->cb, ctx);	/* EBUSY if not masked: fine */
	while (!burn_stop)
		hl_busy_ns(200 * US);
	return 0;
}

static uint64_t attempts(void)
{
	struct kvmpfm_vm_stats st;

	if (hl_vm_stats(&vm, &st))
		return 0;
	return st.samples + st.samples_lost;
}

/* wait for PHASE_SAMPLES more samples, written or lost; false: timeout */
static bool wait_samples(uint64_t *written_lost)
{
	uint64_t a0 = attempts(), t0 = hl_mono_ns();
	struct timespec ts = { 0, 5 * MS };

	while (attempts() < a0 + PHASE_SAMPLES) {
		if (hl_mono_ns() - t0 > PHASE_WAIT_NS)
			return false;
		nanosleep(&ts, NULL);
	}
	*written_lost = attempts() - a0;
	return true;
}

/*
 * One phase: sampling starts, @change runs (the memslot change, then the
 * canary is laid in @canary if not NULL), PHASE_SAMPLES samples more,
 * sampling stops. Returns false (and says why) if it could not.
 */
static bool phase(const char *name, int (*change)(void), uint8_t *canary)
{
	uint64_t n = 0;
	bool ok;
	int ret;

	burn_stop = 0;
	hl_call_async(v, burn_fn, NULL);
	ret = change();
	if (canary)
		memset(canary, CANARY, HL_PAGE);
	ok = !ret && wait_samples(&n);
	burn_stop = 1;
	hl_call_wait(v);
	return hl_check(ok, name, "memslot change %s, %" PRIu64
			" samples in %llu s", hl_status_str(ret), n,
			PHASE_WAIT_NS / 1000000000ULL);
}

static int make_readonly(void)
{
	int ret = set_slot(SLOT_BUF, BUF_GPA, NULL, 0);

	return ret ? ret : set_slot(SLOT_BUF, BUF_GPA, page_b, KVM_MEM_READONLY);
}

static int delete_slot(void)
{
	return set_slot(SLOT_BUF, BUF_GPA, NULL, 0);
}

static int recreate(void)
{
	int ret = set_slot(SLOT_BUF, BUF_GPA, page_b, KVM_MEM_LOG_DIRTY_PAGES);

	return ret ? ret : clear_log(SLOT_BUF);
}

static int move_away(void)
{
	int ret = set_slot(SLOT_BUF, MOVED_GPA, page_b,
			   KVM_MEM_LOG_DIRTY_PAGES);

	ret = ret ? ret : set_slot(SLOT_NEW, BUF_GPA, page_c,
				   KVM_MEM_LOG_DIRTY_PAGES);
	return ret ? ret : clear_log(SLOT_BUF);
}

static int nothing(void)
{
	return 0;
}

static void t_memslot(void)
{
	struct hl_vm_opts o;
	pfarg_pmd_t p;
	uint64_t gpa = BUF_GPA;
	int ret, d;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 1;
	o.bind.personality = PVPFM_PERS_AMD64;
	ret = hl_vm_create(&vm, &o);
	if (!hl_check(!ret, "memslot_setup", "VM: %s", hl_errname(ret)))
		return;
	v = &vm.vcpus[0];
	page_b = mmap(NULL, 2 * HL_PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_b == MAP_FAILED) {
		hl_check(false, "memslot_setup", "mmap: %s", hl_errname(errno));
		goto out;
	}
	page_c = page_b + HL_PAGE;
	memset(page_b, 0, 2 * HL_PAGE);
	ret = set_slot(SLOT_BUF, BUF_GPA, page_b, KVM_MEM_LOG_DIRTY_PAGES);
	ret = ret ? ret : cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE,
					 &ctx);
	ret = ret ? ret : cb_smpl_register(&v->cb, ctx, 0, 1, &gpa);
	cb_pmd_init(&p, PVPFM_VPMD_VCPU_RUN_NS, 0, -(1 * MS));
	p.reg_short_reset = -(1 * MS);
	p.reg_long_reset = -(1 * MS);
	ret = ret ? ret : cb_write_pmds(&v->cb, ctx, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, ctx, 0, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, ctx);
	if (!hl_check(!ret, "memslot_context", "context: %s", hl_status_str(ret)))
		goto out;

	/* the buffer's memslot as registered: samples there, page dirty */
	slot_dirty(SLOT_BUF);
	if (phase("memslot_baseline", nothing, NULL)) {
		d = slot_dirty(SLOT_BUF);
		hl_check(hdr_count(page_b) && d == 1, "memslot_baseline_written",
			 "header count %" PRIu64 ", dirty log %d",
			 hdr_count(page_b), d);
	}

	/* read-only: KVM cannot flip that flag, so delete + create */
	if (phase("memslot_readonly", make_readonly, page_b))
		hl_check(intact(page_b), "memslot_readonly_canary",
			 "samples written into a read-only memslot's page");

	if (phase("memslot_delete", delete_slot, page_b))
		hl_check(intact(page_b), "memslot_delete_canary",
			 "samples written into the page of a deleted memslot");

	/* created again: its page gets the samples again */
	memset(page_b, 0, HL_PAGE);
	if (phase("memslot_recreate", recreate, NULL)) {
		d = slot_dirty(SLOT_BUF);
		hl_check(hdr_count(page_b) && d == 1, "memslot_recreate_written",
			 "header count %" PRIu64 ", dirty log %d",
			 hdr_count(page_b), d);
	}

	/*
	 * Moved away, another memslot at the buffer's address: the samples
	 * go to the new memslot's page (and its dirty log), not to the page
	 * the guest now sees at another address.
	 */
	if (phase("memslot_move", move_away, page_b)) {
		hl_check(intact(page_b), "memslot_move_canary",
			 "samples written into the moved memslot's page");
		d = slot_dirty(SLOT_NEW);
		hl_check(hdr_count(page_c) && d == 1, "memslot_move_follows",
			 "the memslot now at the buffer's address: header count %"
			 PRIu64 ", dirty log %d", hdr_count(page_c), d);
		d = slot_dirty(SLOT_BUF);
		hl_check(d == 0, "memslot_move_dirty_log",
			 "the moved memslot's dirty log %d, want 0", d);
	}
out:
	hl_vm_destroy(&vm);
	if (page_b && page_b != MAP_FAILED)
		munmap(page_b, 2 * HL_PAGE);
}

int main(void)
{
	hl_init();
	t_memslot();
	hl_check_module_idle("memslot_module_idle");
	return hl_summary();
}
