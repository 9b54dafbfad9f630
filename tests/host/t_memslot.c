// SPDX-License-Identifier: GPL-2.0
/*
 * t_memslot: a sampling buffer page follows the VMM's
 * memory table: while a context samples into it, its memslot is made
 * read-only, deleted, re-created, and moved away with another memslot put
 * at its old address, and after each change the test hands the module
 * the new table (KVMPFM_SET_MEM_TABLE, as QEMU's memory listener does
 * after each memory transaction; it returns after the last write through
 * the old table). Then:
 *
 *   - the host memory behind a frame the table no longer maps writable
 *     at the buffer's address is a canary: not one byte of it changes,
 *     while the module writes (or fails to write) samples (its samples
 *     and samples_lost grow: the test is not idle);
 *   - a frame the table maps again gets the samples: the buffer's header
 *     counts them there, and KVMPFM_GET_DIRTY_LOG reports the frame (and
 *     not the moved memslot's new one), as live migration needs.
 *
 * Command blocks likewise: a DOORBELL whose block the table does not map,
 * or maps read-only, fails with EFAULT and writes nothing there.
 *
 * Sampling: VCPU_RUN_NS every 1 ms of the vCPU thread's CPU while it
 * burns CPU outside KVM_RUN (the deferred work writes on its return to
 * user mode); each phase RESTARTs the context (empty buffer, unmasked).
 * The PMD asks for a notification (PFM_REGFL_OVFL_NOTIFY): without one a
 * full buffer would saturate the context (perfmon2 v2.8x), RESTART
 * refused, and no later phase would sample.
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

#define SLOT_BUF	1		/* the buffer's memslot */
#define SLOT_NEW	2		/* put at its address after the move */
#define BUF_GPA		(16UL << 20)	/* above the VM's RAM (slot 0) */
#define MOVED_GPA	(32UL << 20)
#define SLOT_CMD	3		/* a command block's own memslot */
#define CMD_GPA		(48UL << 20)
#define CANARY		0xa5
/* samples (written or lost) a phase waits for, and for how long */
#define PHASE_SAMPLES	3
#define PHASE_WAIT_NS	(30000 * MS)

static struct hl_vm vm;
static struct hl_vcpu *v;
static uint32_t ctx;
static uint8_t *page_b, *page_c;	/* host memory of the two memslots */

/* the memslot and the table after it, as QEMU's commit does */
static int set_slot(uint32_t slot, uint64_t gpa, void *hva, uint32_t flags)
{
	return hl_set_memslot(&vm, slot, flags, gpa, hva ? HL_PAGE : 0, hva);
}

/*
 * KVMPFM_GET_DIRTY_LOG until nothing is left: 1 if @gpa's frame was
 * among the pages the module wrote since the last fetch, else 0; -errno.
 * *@other (if not NULL): the same for @other_gpa's frame.
 */
static int pages_dirty(uint64_t gpa, uint64_t other_gpa, int *other)
{
	uint64_t gfns[64];
	uint32_t nr, more, i;
	int ret, found = 0, found_other = 0;

	do {
		ret = hl_dirty_fetch(&vm, gfns, 64, &nr, &more);
		if (ret)
			return ret;
		for (i = 0; i < nr; i++) {
			found |= gfns[i] == gpa / HL_PAGE;
			found_other |= gfns[i] == other_gpa / HL_PAGE;
		}
	} while (more);
	if (other)
		*other = found_other;
	return found;
}

static int page_dirty(uint64_t gpa)
{
	return pages_dirty(gpa, gpa, NULL);
}

static int clear_log(void)
{
	int d = page_dirty(0);

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
	return t_check(ok, name, "memslot change %s, %" PRIu64
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

	return ret ? ret : clear_log();
}

static int move_away(void)
{
	int ret = set_slot(SLOT_BUF, MOVED_GPA, page_b,
			   KVM_MEM_LOG_DIRTY_PAGES);

	ret = ret ? ret : set_slot(SLOT_NEW, BUF_GPA, page_c,
				   KVM_MEM_LOG_DIRTY_PAGES);
	return ret ? ret : clear_log();
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
	int ret, d, moved = 0;

	o = hl_vm_opts_simple(1);
	if (!hl_check_vm("memslot_setup", hl_vm_create(&vm, &o)))
		return;
	v = &vm.vcpus[0];
	page_b = mmap(NULL, 2 * HL_PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_b == MAP_FAILED) {
		t_check(false, "memslot_setup", "mmap: %s", hl_errname(errno));
		goto out;
	}
	page_c = page_b + HL_PAGE;
	memset(page_b, 0, 2 * HL_PAGE);
	ret = set_slot(SLOT_BUF, BUF_GPA, page_b, KVM_MEM_LOG_DIRTY_PAGES);
	ret = ret ? ret : cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE,
					 &ctx);
	ret = ret ? ret : cb_smpl_register(&v->cb, ctx, 0, 1, &gpa);
	cb_pmd_init(&p, PVPFM_VPMD_VCPU_RUN_NS, 0, -(1 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	p.reg_short_reset = -(1 * MS);
	p.reg_long_reset = -(1 * MS);
	ret = ret ? ret : cb_write_pmds(&v->cb, ctx, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, ctx, 0, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, ctx);
	if (!t_check(!ret, "memslot_context", "context: %s", hl_status_str(ret)))
		goto out;

	/* the buffer's memslot as registered: samples there, page dirty */
	clear_log();
	if (phase("memslot_baseline", nothing, NULL)) {
		d = page_dirty(BUF_GPA);
		t_check(hdr_count(page_b) && d == 1, "memslot_baseline_written",
			"header count %" PRIu64 ", dirty log %d",
			hdr_count(page_b), d);
	}

	/* read-only: KVM cannot flip that flag, so delete + create */
	if (phase("memslot_readonly", make_readonly, page_b))
		t_check(intact(page_b), "memslot_readonly_canary",
			"samples written into a read-only memslot's page");

	if (phase("memslot_delete", delete_slot, page_b))
		t_check(intact(page_b), "memslot_delete_canary",
			"samples written into the page of a deleted memslot");

	/* created again: its page gets the samples again */
	memset(page_b, 0, HL_PAGE);
	if (phase("memslot_recreate", recreate, NULL)) {
		d = page_dirty(BUF_GPA);
		t_check(hdr_count(page_b) && d == 1, "memslot_recreate_written",
			"header count %" PRIu64 ", dirty log %d",
			hdr_count(page_b), d);
	}

	/*
	 * Moved away, another memslot at the buffer's address: the samples
	 * go to the new memslot's page (and its dirty log), not to the page
	 * the guest now sees at another address.
	 */
	if (phase("memslot_move", move_away, page_b)) {
		t_check(intact(page_b), "memslot_move_canary",
			"samples written into the moved memslot's page");
		t_check(hdr_count(page_c), "memslot_move_follows",
			"the memslot now at the buffer's address: header count %"
			PRIu64, hdr_count(page_c));
		/* one fetch: the buffer's frame in it, the moved one not */
		d = pages_dirty(BUF_GPA, MOVED_GPA, &moved);
		t_check(d == 1 && !moved, "memslot_move_dirty_log",
			"in the dirty log: the buffer's frame %d (want 1), "
			"the moved memslot's %d (want 0)", d, moved);
	}
out:
	hl_vm_destroy(&vm);
	if (page_b && page_b != MAP_FAILED)
		munmap(page_b, 2 * HL_PAGE);
}

/* ---- command blocks outside the table ----------------------------- */

struct db_req {
	uint64_t gpa;		/* SET_CMD_BLOCK to it first, unless 0 */
	void *hva;		/* the block, where the test wrote it */
	int set, db;		/* 0 or -errno; db: the block's status */
};

/* on the vCPU thread: maybe move the block, then a PMU_INFO DOORBELL */
static int db_fn(struct hl_vcpu *vc, void *p)
{
	struct kvmpfm_cmd_block cb = { .vcpu = vc->index };
	struct db_req *r = p;
	struct pvpfm_cmd_hdr *h = r->hva;

	r->set = 0;
	if (r->gpa) {
		cb.gpa = r->gpa;
		r->set = HL_IOCTL(vm.pfm_fd, KVMPFM_SET_CMD_BLOCK, &cb);
	}
	r->db = HL_IOCTL(vm.pfm_fd, KVMPFM_DOORBELL, (unsigned long)vc->index);
	if (!r->db)
		r->db = h->status;
	return 0;
}

/* a PMU_INFO block at @hva, the rest of the block the canary */
static void block_lay(uint8_t *hva)
{
	struct pvpfm_cmd_hdr *h = (struct pvpfm_cmd_hdr *)hva;

	memset(hva, CANARY, PVPFM_CMD_BLOCK_SIZE);
	memset(h, 0, sizeof(*h));
	h->version = PVPFM_ABI_VERSION;
	h->cmd = PVPFM_CMD_PMU_INFO;
	h->arg_size = sizeof(struct pvpfm_pmu_info);
	h->status = 0x7fffffff;
}

/*
 * DOORBELL with the block at @hva, which the table does not map writable
 * now: EFAULT, and the block (header and all) is as the test laid it
 */
static void db_refused(const char *name, struct db_req *r, uint8_t *hva,
		       uint8_t *copy)
{
	char n[96];

	block_lay(hva);
	memcpy(copy, hva, PVPFM_CMD_BLOCK_SIZE);
	r->gpa = 0;
	r->hva = hva;
	hl_call(v, db_fn, r);
	snprintf(n, sizeof(n), "%s_doorbell_efault", name);
	HL_EXPECT(n, r->db, -EFAULT);
	snprintf(n, sizeof(n), "%s_nothing_written", name);
	t_check(!memcmp(copy, hva, PVPFM_CMD_BLOCK_SIZE), n,
		"the command block changed");
}

static void t_cmd_block_outside(void)
{
	struct kvmpfm_mem_table empty = { 0 };
	static uint8_t copy[PVPFM_CMD_BLOCK_SIZE];
	struct db_req r;
	uint8_t *page_d;
	int ret;

	if (!hl_check_vm("cmd_block_setup", hl_vm_simple(&vm, 1)))
		return;
	v = &vm.vcpus[0];
	page_d = mmap(NULL, PVPFM_CMD_BLOCK_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_d == MAP_FAILED) {
		t_check(false, "cmd_block_setup", "mmap: %s", hl_errname(errno));
		goto out;
	}
	/* a command block in a memslot of its own: it works */
	ret = hl_set_memslot(&vm, SLOT_CMD, 0, CMD_GPA, PVPFM_CMD_BLOCK_SIZE,
			     page_d);
	block_lay(page_d);
	memset(&r, 0, sizeof(r));
	r.gpa = CMD_GPA;
	r.hva = page_d;
	if (!ret)
		hl_call(v, db_fn, &r);
	t_check(!ret && !r.set && !r.db, "cmd_block_own_memslot_ok",
		"memslot %s, SET_CMD_BLOCK %s, DOORBELL %s",
		hl_status_str(ret), hl_status_str(r.set), hl_status_str2(r.db));

	/* its memslot deleted, the table without it */
	ret = hl_set_memslot(&vm, SLOT_CMD, 0, CMD_GPA, 0, NULL);
	HL_EXPECT("cmd_block_memslot_deleted", ret, 0);
	db_refused("cmd_block_unmapped", &r, page_d, copy);

	/* created again, read-only: read, never written */
	ret = hl_set_memslot(&vm, SLOT_CMD, KVM_MEM_READONLY, CMD_GPA,
			     PVPFM_CMD_BLOCK_SIZE, page_d);
	HL_EXPECT("cmd_block_memslot_readonly", ret, 0);
	db_refused("cmd_block_readonly", &r, page_d, copy);

	/* back in RAM, then a table without any RAM: refused the same */
	memset(&r, 0, sizeof(r));
	r.gpa = v->cmd_gpa;
	r.hva = v->cmd;
	block_lay(v->cmd);
	hl_call(v, db_fn, &r);
	t_check(!r.set && !r.db, "cmd_block_back_in_ram_ok",
		"SET_CMD_BLOCK %s, DOORBELL %s", hl_status_str(r.set),
		hl_status_str2(r.db));
	ret = HL_IOCTL(vm.pfm_fd, KVMPFM_SET_MEM_TABLE, &empty);
	HL_EXPECT("cmd_block_empty_table", ret, 0);
	db_refused("cmd_block_empty_table", &r, v->cmd, copy);
	/* the VMM's table again: the same block works */
	ret = hl_mem_table_set(&vm, vm.pfm_fd);
	block_lay(v->cmd);
	r.gpa = 0;
	if (!ret)
		hl_call(v, db_fn, &r);
	t_check(!ret && !r.db, "cmd_block_table_again_ok",
		"SET_MEM_TABLE %s, DOORBELL %s", hl_status_str(ret),
		hl_status_str2(r.db));
	munmap(page_d, PVPFM_CMD_BLOCK_SIZE);
out:
	hl_vm_destroy(&vm);
}

int main(void)
{
	hl_init();
	t_memslot();
	t_cmd_block_outside();
	hl_check_module_idle("memslot_module_idle");
	return t_done();
}
