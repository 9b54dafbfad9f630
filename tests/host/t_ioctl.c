// SPDX-License-Identifier: GPL-2.0
/*
 * t_ioctl: /dev/kvm-perfmon's host ioctls (kvm_perfmon.h) and the command
 * block header checks, with a real KVM VM.
 *
 * Binding: BIND_VM names no VM (reserved0 must be 0) and refuses bad
 * reserved fields and personalities, a second BIND_VM of the same file;
 * BIND_VCPU, SET_CMD_BLOCK, SET_EVENTFD refuse bad indexes, gpas and fds;
 * DOORBELL comes only from the bound vCPU thread, after its command block
 * is set. One binding per KVM VM, learned when a bound thread enters the
 * guest: a second binding's DOORBELL is EBUSY from then on until the
 * first is closed, and so is a thread's that entered another VM.
 * SET_MEM_TABLE and GET_DIRTY_LOG: their checks, and that a failed fetch
 * loses nothing.
 * Command blocks: bad version, command, argument sizes, vector lengths and
 * context ids answer in the block's status, the ioctl succeeding.
 * Limits: every per-VM limit bounded by its host-wide ceiling (E2BIG
 * above), and usable up to it; module-wide stats refused to a host user
 * without CAP_PERFMON (EPERM); BIND_VCPU's index is the VMM's, whatever
 * KVM's vcpu_id of the vCPU its thread runs; the node is
 * 0660; an event map with a host-counting (SOFTWARE) alias needs
 * CAP_PERFMON (EPERM for uid 65534), guest-only PMU aliases do not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <inttypes.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/eventfd.h>

#include "hostlib.h"

static void t_unbound(void)
{
	struct kvmpfm_vm_stats vs;
	int fd = open(KVMPFM_DEVICE, O_RDWR);

	if (!t_check(fd >= 0, "open_dev", "open %s: %s", KVMPFM_DEVICE,
		     hl_errname(errno)))
		return;
	t_check(ioctl(fd, KVMPFM_GET_API_VERSION, 0) == KVMPFM_API_VERSION,
		"api_version", "GET_API_VERSION != %d", KVMPFM_API_VERSION);
	HL_EXPECT("unbound_doorbell_enotconn",
		  HL_IOCTL(fd, KVMPFM_DOORBELL, 0UL), -ENOTCONN);
	HL_EXPECT("unbound_vm_stats_enotconn",
		  HL_IOCTL(fd, KVMPFM_GET_VM_STATS, &vs), -ENOTCONN);
	HL_EXPECT("unbound_bind_vcpu_enotconn",
		  HL_IOCTL(fd, KVMPFM_BIND_VCPU, 0UL), -ENOTCONN);
	HL_EXPECT("unknown_ioctl_unbound",
		  HL_IOCTL(fd, _IO(KVMPFM_IO, 0x7f), 0UL), -ENOTCONN);
	close(fd);
}

static int bind_with(const struct kvmpfm_bind_vm *in)
{
	struct kvmpfm_bind_vm b = *in;
	int fd = open(KVMPFM_DEVICE, O_RDWR), ret;

	if (fd < 0)
		return HL_IOCTL_ERR(errno);
	ret = HL_IOCTL(fd, KVMPFM_BIND_VM, &b);
	close(fd);
	return ret;
}

/* what "auto" means on this host: its vendor's personality */
static unsigned int host_personality(void)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	unsigned int pers = PVPFM_PERS_AMD64;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9)) {
			if (strstr(line, "GenuineIntel"))
				pers = PVPFM_PERS_INTEL_ARCH;
			break;
		}
	}
	if (f)
		fclose(f);
	return pers;
}

static void t_bind_vm(void)
{
	struct kvmpfm_bind_vm b, ok;
	int fd, kvm_fd;

	memset(&ok, 0, sizeof(ok));
	ok.nr_vcpus = 2;
	ok.personality = PVPFM_PERS_AMD64;

	/* no VM fd any more: the binding is the calling process's */
	HL_EXPECT("bind_vm_no_vm_ok", bind_with(&ok), 0);
	b = ok;
	b.reserved0 = 1;
	HL_EXPECT("bind_vm_reserved0_einval", bind_with(&b), -EINVAL);
	b.reserved0 = -1;
	HL_EXPECT("bind_vm_reserved0_minus1_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.reserved[3] = 1;
	HL_EXPECT("bind_vm_reserved_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.reserved1 = 1;
	HL_EXPECT("bind_vm_reserved1_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.nr_vcpus = 0;
	HL_EXPECT("bind_vm_zero_vcpus_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.nr_vcpus = 100000;
	HL_EXPECT("bind_vm_huge_vcpus_einval", bind_with(&b), -EINVAL);
	/* at most the vCPUs a VM of this host may have (KVM_CAP_MAX_VCPUS) */
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	b.nr_vcpus = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	close(kvm_fd);
	HL_EXPECT("bind_vm_max_vcpus_ok", bind_with(&b), 0);
	b.nr_vcpus++;
	HL_EXPECT("bind_vm_above_max_vcpus_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.personality = 99;
	HL_EXPECT("bind_vm_bad_personality_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.counters = 4;	/* counters are for intel_arch only */
	HL_EXPECT("bind_vm_amd_counters_einval", bind_with(&b), -EINVAL);
	b = ok;
	b.personality = PVPFM_PERS_INTEL_ARCH;
	b.counters = 17;
	HL_EXPECT("bind_vm_intel_17_counters_einval", bind_with(&b), -EINVAL);
	b.counters = 8;
	HL_EXPECT("bind_vm_intel_8_counters_ok", bind_with(&b), 0);
	b = ok;
	b.personality = PVPFM_PERS_AMD64_K8;
	HL_EXPECT("bind_vm_k8_ok", bind_with(&b), 0);
	b.personality = PVPFM_PERS_AUTO;
	HL_EXPECT("bind_vm_auto_ok", bind_with(&b), 0);

	/* the same file twice; BIND_VM returns what the guest is given */
	fd = open(KVMPFM_DEVICE, O_RDWR);
	b = ok;
	b.personality = PVPFM_PERS_AUTO;
	HL_EXPECT("bind_vm_first_ok", HL_IOCTL(fd, KVMPFM_BIND_VM, &b), 0);
	t_check(b.personality == host_personality() && b.counters ==
		pvpfm_pers_desc(host_personality())->counters,
		"bind_vm_auto_resolved", "personality %u counters %u",
		b.personality, b.counters);
	HL_EXPECT("bind_vm_twice_ebusy", HL_IOCTL(fd, KVMPFM_BIND_VM, &b), -EBUSY);
	HL_EXPECT("unknown_ioctl_enotty",
		  HL_IOCTL(fd, _IO(KVMPFM_IO, 0x7f), 0UL), -ENOTTY);
	close(fd);
}

struct vcpu_ioctls {
	int bind_again, bind_other;
	int cb_unaligned, cb_outside, cb_straddle, cb_reserved, cb_ok;
	int db_before_cb, db_ok;
	int ef_bad, ef_notevent, ef_detach, ef_ok, ef_range;
	int db_other_index;
};

/* on vCPU 0's thread; nothing bound by hostlib (no_bind_vcpus) */
static int vcpu0_ioctls(struct hl_vcpu *v, void *p)
{
	struct vcpu_ioctls *r = p;
	int pfm = v->vm->pfm_fd, null_fd;
	struct kvmpfm_cmd_block cb = { .vcpu = 0 };
	struct kvmpfm_eventfd ef = { .vcpu = 0 };

	if (ioctl(pfm, KVMPFM_BIND_VCPU, 0UL))
		return -errno;
	r->bind_again = HL_IOCTL(pfm, KVMPFM_BIND_VCPU, 0UL);
	r->bind_other = HL_IOCTL(pfm, KVMPFM_BIND_VCPU, 1UL);
	r->db_before_cb = HL_IOCTL(pfm, KVMPFM_DOORBELL, 0UL);
	cb.gpa = v->cmd_gpa + 8;
	r->cb_unaligned = HL_IOCTL(pfm, KVMPFM_SET_CMD_BLOCK, &cb);
	cb.gpa = HL_MEM_SIZE + 0x100000;
	r->cb_outside = HL_IOCTL(pfm, KVMPFM_SET_CMD_BLOCK, &cb);
	cb.gpa = HL_MEM_SIZE - HL_PAGE;	/* 3 of its 4 pages are not RAM */
	r->cb_straddle = HL_IOCTL(pfm, KVMPFM_SET_CMD_BLOCK, &cb);
	cb.gpa = v->cmd_gpa;
	cb.reserved = 1;
	r->cb_reserved = HL_IOCTL(pfm, KVMPFM_SET_CMD_BLOCK, &cb);
	cb.reserved = 0;
	r->cb_ok = HL_IOCTL(pfm, KVMPFM_SET_CMD_BLOCK, &cb);

	ef.fd = 1000;
	r->ef_bad = HL_IOCTL(pfm, KVMPFM_SET_EVENTFD, &ef);
	null_fd = open("/dev/null", O_RDWR);
	ef.fd = null_fd;
	r->ef_notevent = HL_IOCTL(pfm, KVMPFM_SET_EVENTFD, &ef);
	close(null_fd);
	ef.fd = -1;
	r->ef_detach = HL_IOCTL(pfm, KVMPFM_SET_EVENTFD, &ef);
	ef.fd = v->efd;
	r->ef_ok = HL_IOCTL(pfm, KVMPFM_SET_EVENTFD, &ef);
	ef.vcpu = 7;
	r->ef_range = HL_IOCTL(pfm, KVMPFM_SET_EVENTFD, &ef);

	/* vCPU 1 is bound to no thread yet: not ours to ring */
	r->db_other_index = HL_IOCTL(pfm, KVMPFM_DOORBELL, 1UL);
	r->db_ok = cb_pmu_info(&v->cb, &(struct pvpfm_pmu_info){ 0 });
	return 0;
}

static int bind_self(struct hl_vcpu *v, void *p)
{
	(void)p;
	return HL_IOCTL(v->vm->pfm_fd, KVMPFM_BIND_VCPU,
			(unsigned long)v->index);
}

/* vCPU 1 from another vCPU's thread */
static int bind_one(struct hl_vcpu *v, void *p)
{
	(void)p;
	return HL_IOCTL(v->vm->pfm_fd, KVMPFM_BIND_VCPU, 1UL);
}

static void t_bind_vcpu(void)
{
	struct vcpu_ioctls r;
	struct hl_vm_opts o;
	struct hl_vm vm;
	struct kvmpfm_cmd_block cb = { .vcpu = 1, .gpa = HL_CMD_GPA(1) };
	int ret;

	/* nr_vcpus 3 in BIND_VM, only 2 KVM vCPUs */
	o = hl_vm_opts_simple(2);
	o.no_bind_vcpus = true;
	o.bind.nr_vcpus = 3;	/* overridden by hostlib: bind by hand below */
	if (!hl_check_vm("bind_vcpu_setup", hl_vm_create(&vm, &o)))
		return;

	memset(&r, 0, sizeof(r));
	ret = hl_call(&vm.vcpus[0], vcpu0_ioctls, &r);
	if (!t_check(!ret, "bind_vcpu_first_ok", "BIND_VCPU: %s",
		     hl_errname(ret)))
		goto out;
	HL_EXPECT("bind_vcpu_again_same_thread_ok", r.bind_again, 0);
	/* a thread is one vCPU: its KVM vCPU could not be told apart */
	HL_EXPECT("bind_vcpu_second_index_ebusy", r.bind_other, -EBUSY);
	HL_EXPECT("doorbell_before_cmd_block_enxio", r.db_before_cb, -ENXIO);
	HL_EXPECT("cmd_block_unaligned_einval", r.cb_unaligned, -EINVAL);
	HL_EXPECT("cmd_block_outside_ram_efault", r.cb_outside, -EFAULT);
	HL_EXPECT("cmd_block_straddles_ram_end_efault", r.cb_straddle, -EFAULT);
	HL_EXPECT("cmd_block_reserved_einval", r.cb_reserved, -EINVAL);
	HL_EXPECT("cmd_block_ok", r.cb_ok, 0);
	HL_EXPECT("eventfd_bad_fd_ebadf", r.ef_bad, -EBADF);
	HL_EXPECT("eventfd_not_eventfd_einval", r.ef_notevent, -EINVAL);
	HL_EXPECT("eventfd_detach_ok", r.ef_detach, 0);
	HL_EXPECT("eventfd_ok", r.ef_ok, 0);
	HL_EXPECT("eventfd_bad_vcpu_einval", r.ef_range, -EINVAL);
	/* vCPU 1 is bound to no thread: not vCPU 0's thread's to ring */
	HL_EXPECT("doorbell_vcpu1_unbound_eperm", r.db_other_index, -EPERM);
	HL_EXPECT("doorbell_ok", r.db_ok, 0);

	/* vCPU 1's own thread binds it; vCPU 0's may not take it then */
	HL_EXPECT("bind_vcpu_own_thread_ok",
		  hl_call(&vm.vcpus[1], bind_self, NULL), 0);
	HL_EXPECT("bind_vcpu_taken_ebusy",
		  hl_call(&vm.vcpus[0], bind_one, NULL), -EBUSY);
	/* from the main thread (not the bound one) */
	HL_EXPECT("doorbell_main_thread_eperm",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_DOORBELL, 0UL), -EPERM);
	HL_EXPECT("doorbell_bad_index_eperm",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_DOORBELL, 99UL), -EPERM);
	HL_EXPECT("bind_vcpu_bad_index_einval",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VCPU, 2UL), -EINVAL);
	cb.vcpu = 9;
	HL_EXPECT("cmd_block_bad_vcpu_einval",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_SET_CMD_BLOCK, &cb), -EINVAL);
out:
	hl_vm_destroy(&vm);

	/*
	 * BIND_VM says 3 vCPUs, KVM has 2: vCPU 2 is a thread that never
	 * runs a KVM vCPU (the main thread); it binds and rings DOORBELL
	 */
	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_pfm = true;
	ret = hl_vm_create(&vm, &o);
	if (!ret) {
		struct kvmpfm_bind_vm b = { .nr_vcpus = 3,
					    .personality = PVPFM_PERS_AMD64 };
		struct kvmpfm_cmd_block cb2 = { .vcpu = 2,
						.gpa = HL_CMD_GPA(2) };
		struct pvpfm_cmd_hdr *h = hl_hva(&vm, HL_CMD_GPA(2));

		vm.pfm_fd = open(KVMPFM_DEVICE, O_RDWR);
		ret = HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VM, &b);
		ret = ret ? ret : hl_mem_table_set(&vm, vm.pfm_fd);
		ret = ret ? ret : HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VCPU, 2UL);
		HL_EXPECT("bind_vcpu_no_kvm_vcpu_ok", ret, 0);
		ret = ret ? ret : HL_IOCTL(vm.pfm_fd, KVMPFM_SET_CMD_BLOCK, &cb2);
		memset(h, 0, sizeof(*h));
		h->version = PVPFM_ABI_VERSION;
		h->cmd = PVPFM_CMD_PMU_INFO;
		h->arg_size = sizeof(struct pvpfm_pmu_info);
		h->status = 0x7fffffff;
		ret = ret ? ret : HL_IOCTL(vm.pfm_fd, KVMPFM_DOORBELL, 2UL);
		HL_EXPECT("doorbell_no_kvm_vcpu_ok", ret ? ret : (int)h->status,
			  0);
		hl_vm_destroy(&vm);
	}
}

static int create_one(struct hl_vcpu *v, uint32_t *id)
{
	return cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, id);
}

static int set_map(struct hl_vm *vm, const struct kvmpfm_event_map_entry *e,
		   uint32_t nr, uint32_t map_reserved)
{
	struct kvmpfm_event_map *m;
	size_t sz = sizeof(*m) + (nr <= 64 ? nr : 64) * sizeof(*e);
	int ret;

	m = calloc(1, sz + 65 * sizeof(*e));
	m->nr = nr;
	m->reserved = map_reserved;
	if (e)
		memcpy(m->entries, e, (nr <= 64 ? nr : 64) * sizeof(*e));
	ret = HL_IOCTL(vm->pfm_fd, KVMPFM_SET_EVENT_MAP, m);
	free(m);
	return ret;
}

static void t_event_map(void)
{
	struct kvmpfm_event_map_entry e[2], bad;
	struct hl_vm vm;
	uint32_t id;
	int ret;

	if (!hl_check_vm("event_map_setup", hl_vm_simple(&vm, 1)))
		return;
	memset(e, 0, sizeof(e));
	e[0].guest_kind = KVMPFM_EVK_GENERIC;
	e[0].guest_event = 0x76;
	e[0].flags = KVMPFM_MAP_EMULATED;
	e[0].host_type = 1;	/* PERF_TYPE_SOFTWARE */
	e[0].host_config = 1;	/* PERF_COUNT_SW_TASK_CLOCK */
	e[1] = e[0];
	e[1].guest_event = 0xc0;
	e[1].host_config = 0;	/* PERF_COUNT_SW_CPU_CLOCK */

	HL_EXPECT("event_map_too_long_einval", set_map(&vm, e, 65, 0), -EINVAL);
	HL_EXPECT("event_map_reserved_einval", set_map(&vm, e, 1, 1), -EINVAL);
	bad = e[0];
	bad.guest_kind = 7;
	HL_EXPECT("event_map_bad_kind_einval", set_map(&vm, &bad, 1, 0), -EINVAL);
	bad = e[0];
	bad.flags = 0x80;
	HL_EXPECT("event_map_bad_flags_einval", set_map(&vm, &bad, 1, 0), -EINVAL);
	bad = e[0];
	bad.reserved = 1;
	HL_EXPECT("event_map_entry_reserved_einval", set_map(&vm, &bad, 1, 0),
		  -EINVAL);
	bad = e[0];
	bad.host_type = 2;	/* PERF_TYPE_TRACEPOINT: not for guests */
	HL_EXPECT("event_map_tracepoint_einval", set_map(&vm, &bad, 1, 0),
		  -EINVAL);
	HL_EXPECT("event_map_ok", set_map(&vm, e, 2, 0), 0);
	HL_EXPECT("event_map_empty_ok", set_map(&vm, NULL, 0, 0), 0);
	ret = create_one(&vm.vcpus[0], &id);
	HL_EXPECT("event_map_ctx_create", ret, 0);
	HL_EXPECT("event_map_with_context_ebusy", set_map(&vm, e, 2, 0), -EBUSY);
	HL_EXPECT("event_map_ctx_destroy", cb_destroy(&vm.vcpus[0].cb, id), 0);
	HL_EXPECT("event_map_after_destroy_ok", set_map(&vm, e, 2, 0), 0);
	hl_vm_destroy(&vm);
}

/* a header with the given fields and @arg_size bytes of zero argument */
static int raw_cmd(struct hl_vcpu *v, uint16_t version, uint16_t cmd,
		   uint32_t ctx, uint32_t count, uint32_t arg_size,
		   int32_t *status)
{
	static uint8_t block[PVPFM_CMD_BLOCK_SIZE];
	struct pvpfm_cmd_hdr *h = (struct pvpfm_cmd_hdr *)block;
	int ret;

	memset(block, 0, sizeof(block));
	h->version = version;
	h->cmd = cmd;
	h->ctx_id = ctx;
	h->count = count;
	h->arg_size = arg_size;
	h->status = 0x7fffffff;
	ret = hl_doorbell_raw(v, block, sizeof(block));
	*status = ((struct pvpfm_cmd_hdr *)v->cmd)->status;
	return ret;
}

static void expect_block(struct hl_vcpu *v, const char *name, uint16_t version,
			 uint16_t cmd, uint32_t ctx, uint32_t count,
			 uint32_t arg_size, int want)
{
	int32_t status = 0;
	int ret = raw_cmd(v, version, cmd, ctx, count, arg_size, &status);

	if (ret) {
		t_check(false, name, "DOORBELL ioctl failed: %s",
			hl_errname(ret));
		return;
	}
	t_check(status == want, name, "status %s, want %s",
		hl_status_str(status), hl_status_str2(want));
}

static void t_block(void)
{
	struct kvmpfm_vm_stats st0, st1;
	struct hl_vm_opts o;
	struct hl_vcpu *v;
	struct hl_vm vm;
	uint32_t id = 0;
	int ret;

	o = hl_vm_opts_simple(1);
	o.bind.max_vector = 2;
	if (!hl_check_vm("block_setup", hl_vm_create(&vm, &o)))
		return;
	v = &vm.vcpus[0];
	cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	hl_vm_stats(&vm, &st0);

	expect_block(v, "block_version0_eproto", 0, PVPFM_CMD_PMU_INFO, 0, 0,
		     sizeof(struct pvpfm_pmu_info), -EPROTO);
	expect_block(v, "block_version2_eproto", 2, PVPFM_CMD_PMU_INFO, 0, 0,
		     sizeof(struct pvpfm_pmu_info), -EPROTO);
	expect_block(v, "block_cmd0_enosys", 1, 0, 0, 0, 0, -ENOSYS);
	expect_block(v, "block_cmd_max_enosys", 1, PVPFM_CMD_MAX, 0, 0, 0,
		     -ENOSYS);
	expect_block(v, "block_cmd_ffff_enosys", 1, 0xffff, 0, 0, 0, -ENOSYS);
	expect_block(v, "block_arg_size_huge_einval", 1, PVPFM_CMD_PMU_INFO,
		     0, 0, 0xffffffff, -EINVAL);
	expect_block(v, "block_arg_size_past_block_einval", 1,
		     PVPFM_CMD_WRITE_PMDS, id, 0,
		     PVPFM_CMD_BLOCK_SIZE, -EINVAL);
	expect_block(v, "block_fixed_arg_short_einval", 1, PVPFM_CMD_PMU_INFO,
		     0, 0, sizeof(struct pvpfm_pmu_info) - 8, -EINVAL);
	expect_block(v, "block_none_arg_given_einval", 1, PVPFM_CMD_STOP, id,
		     0, 8, -EINVAL);
	expect_block(v, "block_unknown_ctx_ebadf", 1, PVPFM_CMD_STOP, 12345,
		     0, 0, -EBADF);
	expect_block(v, "block_ctx0_ebadf", 1, PVPFM_CMD_STOP, 0, 0, 0,
		     -EBADF);
	expect_block(v, "block_vector_over_max_e2big", 1, PVPFM_CMD_READ_PMDS,
		     id, 3, 3 * sizeof(pfarg_pmd_t), -E2BIG);
	expect_block(v, "block_vector_size_mismatch_einval", 1,
		     PVPFM_CMD_READ_PMDS, id, 2, sizeof(pfarg_pmd_t), -EINVAL);
	expect_block(v, "block_vector_count_overflow", 1, PVPFM_CMD_READ_PMDS,
		     id, 0x80000000u, 0, -E2BIG);
	expect_block(v, "block_vector_empty_ok", 1, PVPFM_CMD_READ_PMDS, id, 0,
		     0, 0);
	expect_block(v, "block_smpl_register_short_einval", 1,
		     PVPFM_CMD_SMPL_REGISTER, id, 0, 4, -EINVAL);

	ret = hl_vm_stats(&vm, &st1);
	t_check(!ret && st1.doorbells - st0.doorbells == 16 &&
		st1.commands - st0.commands == 16 &&
		st1.command_errors - st0.command_errors == 15,
		"vm_stats_count_commands",
		"ret %d doorbells +%llu commands +%llu errors +%llu", ret,
		(unsigned long long)(st1.doorbells - st0.doorbells),
		(unsigned long long)(st1.commands - st0.commands),
		(unsigned long long)(st1.command_errors - st0.command_errors));
	t_check(st1.contexts == 1 && st1.sets == 1 && !st1.loaded,
		"vm_stats_contexts", "contexts %u sets %u loaded %u",
		st1.contexts, st1.sets, st1.loaded);
	hl_vm_destroy(&vm);
}

/* ---- limits and their ceilings ---------------------------------------- */

/*
 * BIND_VM with one limit at each value of the sweep (1, 2^28, 2^32 - 1,
 * 2^40, 2^44, all ones) and at the ceiling and one above: E2BIG above
 * the ceiling, else bound. Without a ceiling, 2^28 contexts or sets
 * would reach kvmalloc's size WARN and a 2^44 buffer limit would let a
 * guest make the host allocate without bound.
 */
static void t_limits_sweep(const uint64_t *ceil)
{
	static const uint64_t vals[] = {
		1, 1ULL << 28, 0xffffffffULL, 1ULL << 40, 1ULL << 44, ~0ULL,
	};
	const unsigned int nr = sizeof(vals) / sizeof(vals[0]);
	struct kvmpfm_bind_vm b;
	char name[96];
	unsigned int i;
	int l, ret, want;
	uint64_t v;

	for (l = 0; l < HL_LIM_N; l++) {
		for (i = 0; i < nr + 2; i++) {
			/* the sweep, then the ceiling and one above it */
			v = i < nr ? vals[i] : ceil[l] + (i - nr);
			/* the u32 limits: the values that fit the field */
			if (l != HL_LIM_SMPL_BUF && v > 0xffffffffULL)
				continue;
			memset(&b, 0, sizeof(b));
			b.nr_vcpus = 1;
			b.personality = PVPFM_PERS_AMD64;
			hl_lim_set(&b, l, v);
			want = v > ceil[l] ? -E2BIG : 0;
			snprintf(name, sizeof(name), "limits_%s_%#" PRIx64 "_%s",
				 hl_lim_name[l], v, want ? "e2big" : "ok");
			ret = bind_with(&b);
			HL_EXPECT(name, ret, want);
		}
	}
}

/* a VM bound with @b (1 vCPU, threads bound); 0 or -errno */
static int limits_vm(struct hl_vm *vm, const struct kvmpfm_bind_vm *b)
{
	struct hl_vm_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 1;
	o.bind = *b;
	return hl_vm_create(vm, &o);
}

/*
 * Every limit at its ceiling, then used to the full: the contexts, the
 * sets of one context, a vector call of max_vector entries, a sampling
 * buffer of max_smpl_buf bytes (its page table has every page). One more
 * of each is refused with the limit's own errno.
 */
static void t_limits_at_ceiling(const uint64_t *ceil)
{
	struct pvpfm_pmu_info info;
	struct kvmpfm_bind_vm b;
	pfarg_setdesc_t *sets;
	pfarg_pmc_t *pmcs;
	uint32_t *ids, id = 0, smpl = 0, n, i;
	uint64_t gpa, pages;
	struct hl_vcpu *v;
	struct hl_vm vm;
	int ret, l;

	memset(&b, 0, sizeof(b));
	b.personality = PVPFM_PERS_AMD64;
	for (l = 0; l < HL_LIM_N; l++)
		hl_lim_set(&b, l, ceil[l]);
	ret = limits_vm(&vm, &b);
	if (!hl_check_vm("limits_ceiling_bind_ok", ret))
		return;
	v = &vm.vcpus[0];
	ret = cb_pmu_info(&v->cb, &info);
	for (l = 0; l < HL_LIM_N; l++)
		if (!ret && hl_lim_of_info(&info, l) != ceil[l])
			ret = -ERANGE;
	t_check(!ret, "limits_ceiling_pmu_info", "%s: contexts %u sets %u "
		"vector %u smpl_buf %" PRIu64, hl_status_str(ret),
		info.max_contexts, info.max_sets, info.max_vector,
		(uint64_t)info.max_smpl_buf);

	/* every context, then one more */
	n = ceil[HL_LIM_CONTEXTS];
	ids = calloc(n, sizeof(*ids));
	for (i = 0, ret = 0; ids && i < n && !ret; i++)
		ret = cb_create(&v->cb, 0, &ids[i]);
	t_check(ids && !ret, "limits_ceiling_all_contexts",
		"context %u of %u: %s", i, n, hl_status_str(ret));
	HL_EXPECT("limits_ceiling_context_over_emfile",
		  cb_create(&v->cb, 0, NULL), -EMFILE);
	for (i = 0; ids && i < n; i++)
		if (ids[i])
			cb_destroy(&v->cb, ids[i]);
	free(ids);

	/* the sets of one context: set 0 and ceiling - 1 more */
	ret = cb_create(&v->cb, 0, &id);
	n = ceil[HL_LIM_SETS] - 1;
	sets = calloc(n + 1, sizeof(*sets));
	for (i = 0; sets && i <= n; i++)
		sets[i].set_id = i + 1;
	for (i = 0; sets && !ret && i < n; i += ret ? 0 : 64) {
		uint32_t k = n - i < 64 ? n - i : 64;

		ret = cb_create_sets(&v->cb, id, &sets[i], k);
	}
	t_check(sets && !ret, "limits_ceiling_all_sets", "%s",
		hl_status_str(ret));
	if (sets)
		HL_EXPECT("limits_ceiling_set_over_enospc",
			  cb_create_sets(&v->cb, id, &sets[n], 1), -ENOSPC);
	free(sets);

	/* a vector of max_vector entries: PMC 0 written disabled (INT set) */
	n = ceil[HL_LIM_VECTOR];
	pmcs = calloc(n, sizeof(*pmcs));
	for (i = 0; pmcs && i < n; i++)
		cb_pmc_init(&pmcs[i], 0, 0, 1ULL << 20);
	HL_EXPECT("limits_ceiling_full_vector_ok",
		  pmcs ? cb_write_pmcs(&v->cb, id, pmcs, n) : -ENOMEM, 0);
	free(pmcs);
	cb_destroy(&v->cb, id);

	/* a buffer of max_smpl_buf: its last page can be registered */
	pages = (ceil[HL_LIM_SMPL_BUF] + PVPFM_PAGE_SIZE - 1) / PVPFM_PAGE_SIZE;
	gpa = hl_gpa_alloc(&vm, HL_PAGE);
	HL_EXPECT("limits_ceiling_smpl_buf_ok",
		  cb_create_smpl(&v->cb, 0, ceil[HL_LIM_SMPL_BUF], &smpl), 0);
	HL_EXPECT("limits_ceiling_smpl_last_page_ok",
		  cb_smpl_register(&v->cb, smpl, pages - 1, 1, &gpa), 0);
	HL_EXPECT("limits_ceiling_smpl_past_last_einval",
		  cb_smpl_register(&v->cb, smpl, pages, 1, &gpa), -EINVAL);
	HL_EXPECT("limits_ceiling_smpl_buf_over_enomem",
		  cb_create_smpl(&v->cb, 0, ceil[HL_LIM_SMPL_BUF] + 1, NULL),
		  -ENOMEM);
	cb_destroy(&v->cb, smpl);
	hl_vm_destroy(&vm);
}

/* every limit 1: each the least usable, one more of each refused */
static void t_limits_one(void)
{
	struct pvpfm_pmu_info info;
	struct kvmpfm_bind_vm b;
	pfarg_setdesc_t set = { .set_id = 1 };
	pfarg_pmc_t pmcs[2];
	struct hl_vcpu *v;
	struct hl_vm vm;
	uint32_t id = 0;
	int ret, l;

	memset(&b, 0, sizeof(b));
	b.personality = PVPFM_PERS_AMD64;
	for (l = 0; l < HL_LIM_N; l++)
		hl_lim_set(&b, l, 1);
	ret = limits_vm(&vm, &b);
	if (!hl_check_vm("limits_one_bind_ok", ret))
		return;
	v = &vm.vcpus[0];
	ret = cb_pmu_info(&v->cb, &info);
	t_check(!ret && info.max_contexts == 1 && info.max_sets == 1 &&
		info.max_vector == 1 && info.max_smpl_buf == 1,
		"limits_one_pmu_info", "%s", hl_status_str(ret));
	HL_EXPECT("limits_one_context_ok", cb_create(&v->cb, 0, &id), 0);
	HL_EXPECT("limits_one_second_context_emfile",
		  cb_create(&v->cb, 0, NULL), -EMFILE);
	HL_EXPECT("limits_one_second_set_enospc",
		  cb_create_sets(&v->cb, id, &set, 1), -ENOSPC);
	cb_pmc_init(&pmcs[0], 0, 0, 1ULL << 20);
	cb_pmc_init(&pmcs[1], 1, 0, 1ULL << 20);
	HL_EXPECT("limits_one_vector_of_2_e2big",
		  cb_write_pmcs(&v->cb, id, pmcs, 2), -E2BIG);
	cb_destroy(&v->cb, id);
	HL_EXPECT("limits_one_smpl_buf_enomem",
		  cb_create_smpl(&v->cb, 0, 8192, NULL), -ENOMEM);
	hl_vm_destroy(&vm);
}

static void t_limits(void)
{
	static const uint64_t dfl[HL_LIM_N] = { 1024, 64, 340, 64ULL << 20 };
	uint64_t ceil[HL_LIM_N];
	bool ok = true;
	int l;

	for (l = 0; l < HL_LIM_N; l++) {
		ceil[l] = hl_ceiling(l);
		ok &= ceil[l] == dfl[l];
	}
	t_check(ok, "limits_ceilings_default", "contexts %" PRIu64
		" sets %" PRIu64 " vector %" PRIu64 " smpl_buf %" PRIu64,
		ceil[0], ceil[1], ceil[2], ceil[3]);
	/* a module without them is held to the documented defaults */
	for (l = 0; l < HL_LIM_N; l++)
		if (!ceil[l])
			ceil[l] = dfl[l];

	t_limits_sweep(ceil);
	t_limits_one();
	t_limits_at_ceiling(ceil);
}

/* ---- module stats for the operator only ------------------------------- */

struct unpriv_result {
	int uid;		/* after dropping */
	int api;		/* GET_API_VERSION on the fd opened as root */
	int stats;		/* GET_MODULE_STATS on it: 0 or -errno */
	int stats_reopen;	/* the same on a fresh open, if it opens */
	int reopen;		/* that open: 0 or -errno */
};

/*
 * A child opens the node as root, drops to uid/gid 65534 (no
 * capabilities left), and asks for the module-wide stats on that file
 * and on one it opens itself (the node's mode decides whether it can).
 */
static int module_stats_child(void *unused, void *res)
{
	struct unpriv_result *r = res;
	struct kvmpfm_module_stats st;
	int fd = open(KVMPFM_DEVICE, O_RDWR), fd2;

	(void)unused;
	memset(r, 0, sizeof(*r));
	if (fd < 0 || hl_drop_to_nobody())
		return 2;
	r->uid = getuid();
	r->api = ioctl(fd, KVMPFM_GET_API_VERSION, 0);
	r->stats = HL_IOCTL(fd, KVMPFM_GET_MODULE_STATS, &st);
	fd2 = open(KVMPFM_DEVICE, O_RDWR);
	r->reopen = fd2 < 0 ? -errno : 0;
	r->stats_reopen = fd2 < 0 ? 0 :
			  HL_IOCTL(fd2, KVMPFM_GET_MODULE_STATS, &st);
	return 0;
}

static void t_module_stats_unpriv(void)
{
	struct kvmpfm_module_stats st;
	struct unpriv_result r;
	struct stat sb;
	int st_code;

	HL_EXPECT("module_stats_root_ok", hl_module_stats(&st), 0);
	if (!stat(KVMPFM_DEVICE, &sb))
		t_note("note: %s is mode %04o uid %d gid %d", KVMPFM_DEVICE,
		       (unsigned int)(sb.st_mode & 07777), (int)sb.st_uid,
		       (int)sb.st_gid);
	memset(&r, 0, sizeof(r));
	r.api = -1;
	r.uid = -1;
	st_code = t_child(module_stats_child, NULL, &r, sizeof(r));
	if (st_code < 0) {
		t_check(false, "module_stats_unpriv_setup", "no child: %s",
			hl_errname(st_code));
		return;
	}
	if (!t_check(WIFEXITED(st_code) && !WEXITSTATUS(st_code) &&
		     r.uid == HL_NOBODY, "module_stats_unpriv_child",
		     "child status %#x uid %d", st_code, r.uid))
		return;
	t_check(r.api == KVMPFM_API_VERSION, "module_stats_unpriv_fd_usable",
		"GET_API_VERSION %d", r.api);
	HL_EXPECT("module_stats_unpriv_eperm", r.stats, -EPERM);
	if (r.reopen)
		t_note("note: uid 65534 cannot open %s itself: %s",
		       KVMPFM_DEVICE, hl_errname(r.reopen));
	else
		HL_EXPECT("module_stats_unpriv_own_open_eperm",
			  r.stats_reopen, -EPERM);
}

/*
 * The node is 0660 (root and, by udev rule, group kvm;
 * the rig's L1 has devtmpfs only, so root:root), never world-accessible.
 */
static void t_node_mode(void)
{
	struct stat sb;

	if (!t_check(!stat(KVMPFM_DEVICE, &sb), "node_mode_stat", "%s: %s",
		     KVMPFM_DEVICE, hl_errname(errno)))
		return;
	t_check((sb.st_mode & 07777) == 0660, "node_mode_0660",
		"%s is mode %04o", KVMPFM_DEVICE,
		(unsigned int)(sb.st_mode & 07777));
	t_check(!(sb.st_mode & 0007), "node_not_world_accessible",
		"%s is mode %04o", KVMPFM_DEVICE,
		(unsigned int)(sb.st_mode & 07777));
}

struct map_unpriv_result {
	int setup;		/* the VM, made as root: 0 or -errno */
	int uid;		/* after dropping */
	int sw;			/* a SOFTWARE alias (counts the host) */
	int sw_hw;		/* HARDWARE + SOFTWARE: one host alias taints */
	int hw;			/* HARDWARE only (guest-only, exclude_host) */
	int cache;		/* HW_CACHE only (guest-only, exclude_host) */
	int raw;		/* RAW only (guest-only, exclude_host) */
	int empty;		/* clearing the map */
};

/*
 * An event map whose aliases count outside the guest
 * (SOFTWARE: the vCPU thread in host kernel mode too) needs CAP_PERFMON,
 * as perf would demand; guest-only PMU aliases do not (KVM's vPMU gives
 * any guest as much). A child makes its VM as root, drops to uid/gid
 * 65534 and sets maps on it.
 */
/* the maps a child sets as HL_NOBODY */
struct map_unpriv_maps {
	struct kvmpfm_event_map_entry sw, hw[2], cache, raw;
};

static int event_map_child(void *arg, void *res)
{
	const struct map_unpriv_maps *m = arg;
	struct map_unpriv_result *r = res;
	struct hl_vm vm;

	memset(r, 0, sizeof(*r));
	r->setup = hl_vm_simple(&vm, 1);
	if (!r->setup)
		r->setup = hl_drop_to_nobody();
	if (!r->setup) {
		r->uid = getuid();
		r->sw = set_map(&vm, &m->sw, 1, 0);
		r->sw_hw = set_map(&vm, m->hw, 2, 0);
		r->hw = set_map(&vm, m->hw, 1, 0);
		r->cache = set_map(&vm, &m->cache, 1, 0);
		r->raw = set_map(&vm, &m->raw, 1, 0);
		r->empty = set_map(&vm, NULL, 0, 0);
	}
	return 0;
}

static void t_event_map_unpriv(void)
{
	struct kvmpfm_event_map_entry sw, hw[2], cache, raw;
	struct map_unpriv_maps m;
	struct map_unpriv_result r;
	int st_code;

	memset(&sw, 0, sizeof(sw));
	sw.guest_kind = KVMPFM_EVK_GENERIC;
	sw.guest_event = 0x76;
	sw.flags = KVMPFM_MAP_EMULATED;
	sw.host_type = 1;	/* PERF_TYPE_SOFTWARE */
	sw.host_config = 0;	/* PERF_COUNT_SW_CPU_CLOCK */
	hw[0] = sw;
	hw[0].host_type = 0;	/* PERF_TYPE_HARDWARE */
	hw[0].host_config = 0;	/* PERF_COUNT_HW_CPU_CYCLES */
	hw[1] = sw;
	hw[1].guest_event = 0xc0;
	cache = hw[0];
	cache.host_type = 3;	/* PERF_TYPE_HW_CACHE */
	cache.host_config = 0;	/* L1D read access */
	raw = hw[0];
	raw.host_type = 4;	/* PERF_TYPE_RAW */
	raw.host_config = 0x76;
	m = (struct map_unpriv_maps){
		.sw = sw, .hw = { hw[0], hw[1] }, .cache = cache, .raw = raw,
	};

	memset(&r, 0, sizeof(r));
	r.setup = -EIO;
	st_code = t_child(event_map_child, &m, &r, sizeof(r));
	if (st_code < 0) {
		t_check(false, "event_map_unpriv_setup", "no child: %s",
			hl_errname(st_code));
		return;
	}
	if (!t_check(WIFEXITED(st_code) && !WEXITSTATUS(st_code) &&
		     !r.setup && r.uid == HL_NOBODY, "event_map_unpriv_child",
		     "child status %#x setup %s uid %d", st_code,
		     hl_errname(r.setup), r.uid))
		return;
	HL_EXPECT("event_map_unpriv_software_eperm", r.sw, -EPERM);
	HL_EXPECT("event_map_unpriv_hw_plus_software_eperm", r.sw_hw, -EPERM);
	HL_EXPECT("event_map_unpriv_hardware_guest_only_ok", r.hw, 0);
	HL_EXPECT("event_map_unpriv_cache_guest_only_ok", r.cache, 0);
	HL_EXPECT("event_map_unpriv_raw_guest_only_ok", r.raw, 0);
	HL_EXPECT("event_map_unpriv_empty_ok", r.empty, 0);
}

/* ---- a vCPU is its thread: KVM's vcpu_id is not the index ------------- */

struct bind_req {
	int fd;			/* the binding; -1: the VM's */
	unsigned long index;
	struct hl_vcpu *run_vcpu;	/* the KVM vCPU the thread runs */
	struct hl_vm *bound;	/* whose RAM the binding maps; NULL: run_vcpu's */
	bool run_first;		/* KVM_RUN it before binding, else after */
	bool no_bind;		/* the thread is bound already */
	int run, bind, db_before, db;	/* 0 or -errno; db*: the block's */
};

/*
 * On a thread: maybe run a KVM vCPU, bind @index with the vCPU's command
 * block, ring one PMU_INFO; then, if it did not run before, run the KVM
 * vCPU and ring another
 */
static int bind_index_thread(void *p)
{
	struct bind_req *r = p;
	struct hl_vcpu *v = r->run_vcpu;
	struct hl_vm *vm = r->bound ? r->bound : v->vm;
	uint64_t gpa = HL_CMD_GPA(r->index);
	struct kvmpfm_cmd_block cb = { .vcpu = r->index, .gpa = gpa };
	struct pvpfm_cmd_hdr *h = hl_hva(vm, gpa);
	int fd = r->fd >= 0 ? r->fd : vm->pfm_fd;

	r->run = r->run_first ? hl_run_io(v, 1) : 0;
	r->bind = r->no_bind ? 0 : HL_IOCTL(fd, KVMPFM_BIND_VCPU, r->index);
	r->db_before = r->db = -ENOTCONN;
	if (r->bind)
		return 0;
	r->bind = HL_IOCTL(fd, KVMPFM_SET_CMD_BLOCK, &cb);
	if (r->bind)
		return 0;
	r->db_before = hl_pmu_info_doorbell(fd, r->index, h);
	if (!r->run_first)
		r->run = hl_run_io(v, 1);
	r->db = hl_pmu_info_doorbell(fd, r->index, h);
	return 0;
}

static int bind_index_fn(struct hl_vcpu *v, void *p)
{
	(void)v;
	return bind_index_thread(p);
}

/* a request for binding @fd's vCPU @index from a thread that runs @run */
static struct bind_req bind_req(int fd, unsigned long index,
				struct hl_vcpu *run)
{
	return (struct bind_req){ .fd = fd, .index = index, .run_vcpu = run };
}

/* KVM vCPUs with ids 3 and 1 (created in that order), bound by hand */
static int ids_vm(struct hl_vm *vm)
{
	static const uint32_t ids[] = { 3, 1 };
	struct hl_vm_opts o;

	o = hl_vm_opts_simple(2);
	o.no_bind_vcpus = true;
	o.vcpu_ids = ids;
	return hl_vm_create(vm, &o);
}

/*
 * The binding's vCPU index is the VMM's (QEMU's cpu index), whatever
 * KVM's vcpu_id (the APIC id): index 0 runs the vCPU of id 3, index 1
 * that of id 1, bound before or after the thread first ran it.
 */
static void t_vcpu_ids(void)
{
	struct bind_req r;
	struct hl_vm vm;

	if (!hl_check_vm("vcpu_ids_setup", ids_vm(&vm)))
		return;
	r = bind_req(-1, 0, &vm.vcpus[0]);
	hl_call(&vm.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("vcpu_ids_index0_id3_bind_ok", r.bind, 0);
	HL_EXPECT("vcpu_ids_index0_doorbell_before_entry_ok", r.db_before, 0);
	HL_EXPECT("vcpu_ids_index0_id3_ran", r.run, 0);
	HL_EXPECT("vcpu_ids_index0_doorbell_after_entry_ok", r.db, 0);
	r = bind_req(-1, 1, &vm.vcpus[1]);
	r.run_first = true;
	hl_call(&vm.vcpus[1], bind_index_fn, &r);
	HL_EXPECT("vcpu_ids_index1_id1_ran_first", r.run, 0);
	HL_EXPECT("vcpu_ids_index1_id1_bind_ok", r.bind, 0);
	HL_EXPECT("vcpu_ids_index1_doorbell_ok", r.db, 0);
	hl_vm_destroy(&vm);
}

/*
 * One binding per KVM VM, now that BIND_VM names none: a second binding
 * of the same process binds, and its DOORBELL works until one of its
 * vCPU threads has entered the VM a first binding holds: then EBUSY,
 * until the first binding is closed. The first goes on working.
 */
static void t_one_vm_binding(void)
{
	struct kvmpfm_bind_vm b = { .nr_vcpus = 1,
				    .personality = PVPFM_PERS_AMD64 };
	struct bind_req r;
	struct hl_vm vm;
	int fd2, ret;

	if (!hl_check_vm("one_vm_binding_setup", ids_vm(&vm)))
		return;
	/* the first binding's vCPU 0 runs KVM vCPU 0: the VM is the first's */
	r = bind_req(-1, 0, &vm.vcpus[0]);
	hl_call(&vm.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("one_vm_binding_first_doorbell_ok", r.db, 0);

	fd2 = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	ret = fd2 < 0 ? -errno : HL_IOCTL(fd2, KVMPFM_BIND_VM, &b);
	HL_EXPECT("one_vm_binding_second_bind_vm_ok", ret, 0);
	ret = ret ? ret : hl_mem_table_set(&vm, fd2);
	HL_EXPECT("one_vm_binding_second_mem_table_ok", ret, 0);
	/* its vCPU 0 is the thread of KVM vCPU 1 of the same VM */
	r = bind_req(fd2, 0, &vm.vcpus[1]);
	hl_call(&vm.vcpus[1], bind_index_fn, &r);
	HL_EXPECT("one_vm_binding_second_bind_vcpu_ok", r.bind, 0);
	HL_EXPECT("one_vm_binding_second_doorbell_before_entry_ok",
		  r.db_before, 0);
	HL_EXPECT("one_vm_binding_second_ran", r.run, 0);
	HL_EXPECT("one_vm_binding_second_doorbell_ebusy", r.db, -EBUSY);
	/* the first one's vCPU still works; the second's still refused */
	HL_EXPECT("one_vm_binding_first_still_works",
		  cb_pmu_info(&vm.vcpus[0].cb, &(struct pvpfm_pmu_info){ 0 }),
		  0);
	r.no_bind = true;
	r.run_first = true;
	hl_call(&vm.vcpus[1], bind_index_fn, &r);
	HL_EXPECT("one_vm_binding_second_still_ebusy", r.db, -EBUSY);
	/* the first binding closed: the VM is the second's to take */
	hl_vm_close_pfm(&vm);
	hl_call(&vm.vcpus[1], bind_index_fn, &r);
	HL_EXPECT("one_vm_binding_second_after_first_closed_ok", r.db, 0);
	if (fd2 >= 0)
		close(fd2);
	hl_vm_destroy(&vm);
}

/*
 * A vCPU thread that runs a vCPU of another KVM VM than the one its
 * binding's vCPUs run: its DOORBELL is EBUSY; the binding's other vCPU
 * goes on. First entry into the other VM, and entry after it had run
 * the binding's own VM.
 */
static void t_foreign_vcpu(void)
{
	struct kvmpfm_bind_vm b = { .nr_vcpus = 2,
				    .personality = PVPFM_PERS_AMD64 };
	struct hl_vm x, y;
	struct bind_req r;
	struct hl_vm_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_bind_vcpus = true;
	o.bind = b;
	if (!hl_check_vm("foreign_vcpu_setup", hl_vm_create(&x, &o)))
		return;
	o.no_pfm = true;
	ret = hl_vm_create(&y, &o);
	if (!t_check(!ret, "foreign_vcpu_setup_other", "VM: %s",
		     hl_errname(ret))) {
		hl_vm_destroy(&x);
		return;
	}
	/* index 0, on X's vCPU 0 thread, runs X: X is the binding's VM */
	r = bind_req(-1, 0, &x.vcpus[0]);
	hl_call(&x.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("foreign_vcpu_own_vm_doorbell_ok", r.db, 0);
	/* index 1, on Y's vCPU 0 thread, binds to X and runs Y */
	r = bind_req(-1, 1, &y.vcpus[0]);
	r.bound = &x;
	hl_call(&y.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("foreign_vcpu_bind_ok", r.bind, 0);
	HL_EXPECT("foreign_vcpu_doorbell_before_entry_ok", r.db_before, 0);
	HL_EXPECT("foreign_vcpu_ran_other_vm", r.run, 0);
	HL_EXPECT("foreign_vcpu_doorbell_ebusy", r.db, -EBUSY);
	HL_EXPECT("foreign_vcpu_own_still_works",
		  cb_pmu_info(&x.vcpus[0].cb, &(struct pvpfm_pmu_info){ 0 }),
		  0);
	/* index 0's thread, which adopted X's vCPU, now runs Y's vCPU 1 */
	r = bind_req(-1, 0, &y.vcpus[1]);
	r.bound = &x;
	r.no_bind = true;
	hl_call(&x.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("foreign_vcpu_after_own_ran_other_vm", r.run, 0);
	HL_EXPECT("foreign_vcpu_after_own_doorbell_ebusy", r.db, -EBUSY);
	hl_vm_destroy(&y);
	hl_vm_destroy(&x);
}

/* ---- the VMM's memory table (KVMPFM_SET_MEM_TABLE) ------------------- */

struct table {
	struct kvmpfm_mem_table t;
	struct kvmpfm_mem_region r[KVMPFM_MAX_MEM_REGIONS + 1];
};

static int set_table(int fd, struct table *m)
{
	return HL_IOCTL(fd, KVMPFM_SET_MEM_TABLE, m);
}

/* @m: one region, the VM's RAM */
static void table_ram(struct table *m, struct hl_vm *vm)
{
	memset(m, 0, sizeof(*m));
	m->t.nr = 1;
	m->r[0].gpa = 0;
	m->r[0].size = HL_MEM_SIZE;
	m->r[0].uaddr = (uintptr_t)vm->mem;
}

static void expect_table(struct hl_vm *vm, struct table *m, const char *name,
			 int want)
{
	HL_EXPECT(name, set_table(vm->pfm_fd, m), want);
	table_ram(m, vm);
}

static void t_mem_table(void)
{
	static struct table m;
	struct pvpfm_pmu_info info;
	struct hl_vm vm;
	uint32_t i;
	int st;
	pid_t pid;

	if (!hl_check_vm("mem_table_setup", hl_vm_simple(&vm, 1)))
		return;
	table_ram(&m, &vm);
	expect_table(&vm, &m, "mem_table_ram_ok", 0);
	m.t.nr = 0;
	expect_table(&vm, &m, "mem_table_empty_ok", 0);
	/* two regions, adjacent, given out of order */
	m.t.nr = 2;
	m.r[0].gpa = HL_MEM_SIZE / 2;
	m.r[0].size = HL_MEM_SIZE / 2;
	m.r[0].uaddr = (uintptr_t)vm.mem + HL_MEM_SIZE / 2;
	m.r[1].gpa = 0;
	m.r[1].size = HL_MEM_SIZE / 2;
	m.r[1].uaddr = (uintptr_t)vm.mem;
	expect_table(&vm, &m, "mem_table_two_adjacent_ok", 0);

	m.r[0].gpa += 8;
	expect_table(&vm, &m, "mem_table_unaligned_gpa_einval", -EINVAL);
	m.r[0].size -= 8;
	expect_table(&vm, &m, "mem_table_unaligned_size_einval", -EINVAL);
	m.r[0].uaddr += 8;
	expect_table(&vm, &m, "mem_table_unaligned_uaddr_einval", -EINVAL);
	m.r[0].size = 0;
	expect_table(&vm, &m, "mem_table_empty_region_einval", -EINVAL);
	/* the same two, overlapping by a page (given in reverse order) */
	m.t.nr = 2;
	m.r[0].gpa = HL_MEM_SIZE / 2 - HL_PAGE;
	m.r[0].size = HL_MEM_SIZE / 2;
	m.r[0].uaddr = (uintptr_t)vm.mem + HL_MEM_SIZE / 2;
	m.r[1].gpa = 0;
	m.r[1].size = HL_MEM_SIZE / 2;
	m.r[1].uaddr = (uintptr_t)vm.mem;
	expect_table(&vm, &m, "mem_table_overlapping_einval", -EINVAL);
	m.r[0].gpa = ~0ULL - HL_PAGE + 1;	/* the last guest page + 1 */
	m.r[0].size = 2 * HL_PAGE;
	expect_table(&vm, &m, "mem_table_gpa_wraps_einval", -EINVAL);
	m.r[0].uaddr = ~0ULL - HL_PAGE + 1;
	m.r[0].size = 2 * HL_PAGE;
	expect_table(&vm, &m, "mem_table_uaddr_wraps_einval", -EINVAL);
	m.r[0].uaddr = 0xffff888000000000ULL;	/* the kernel's direct map */
	expect_table(&vm, &m, "mem_table_kernel_uaddr_einval", -EINVAL);
	/* non-canonical with 4- and 5-level paging alike */
	m.r[0].uaddr = 0x7ffffffffffe0000ULL;
	m.r[0].size = 2 * HL_PAGE;
	expect_table(&vm, &m, "mem_table_noncanonical_uaddr_einval", -EINVAL);
	m.t.reserved = 1;
	expect_table(&vm, &m, "mem_table_reserved_einval", -EINVAL);
	m.r[0].reserved = 1;
	expect_table(&vm, &m, "mem_table_region_reserved_einval", -EINVAL);
	m.r[0].flags = 0x2;
	expect_table(&vm, &m, "mem_table_unknown_flag_einval", -EINVAL);
	m.r[0].flags = KVMPFM_MEM_READONLY;
	expect_table(&vm, &m, "mem_table_readonly_ok", 0);
	/* at most KVMPFM_MAX_MEM_REGIONS: a page each, one host page */
	for (i = 0; i <= KVMPFM_MAX_MEM_REGIONS; i++) {
		m.r[i].gpa = HL_MEM_SIZE + i * HL_PAGE;
		m.r[i].size = HL_PAGE;
		m.r[i].uaddr = (uintptr_t)vm.mem;
	}
	m.r[0].gpa = 0;
	m.r[0].size = HL_MEM_SIZE;
	m.t.nr = KVMPFM_MAX_MEM_REGIONS;
	HL_EXPECT("mem_table_max_regions_ok", set_table(vm.pfm_fd, &m), 0);
	m.t.nr = KVMPFM_MAX_MEM_REGIONS + 1;
	expect_table(&vm, &m, "mem_table_too_many_regions_einval", -EINVAL);
	HL_EXPECT("mem_table_bad_pointer_efault",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_SET_MEM_TABLE, (void *)8), -EFAULT);
	/* the refusals left the table as it was: the RAM, commands work */
	HL_EXPECT("mem_table_refused_keeps_table",
		  cb_pmu_info(&vm.vcpus[0].cb, &info), 0);

	/* another process (the fd inherited, the mm not): EPERM */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(-set_table(vm.pfm_fd, &m) & 0xff);
	st = 0;
	waitpid(pid, &st, 0);
	t_check(WIFEXITED(st) && WEXITSTATUS(st) == EPERM,
		"mem_table_other_process_eperm", "child got %s",
		WIFEXITED(st) ? hl_errname(WEXITSTATUS(st)) : "killed");
	hl_vm_destroy(&vm);
}

/* ---- the pages the module wrote (KVMPFM_GET_DIRTY_LOG) --------------- */

/* @gpa's frame among @gfns[@nr] */
static bool has_gfn(const uint64_t *gfns, uint32_t nr, uint64_t gpa)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (gfns[i] == gpa / HL_PAGE)
			return true;
	return false;
}

/*
 * The results of a PMU_INFO DOORBELL land in the first page of the
 * command block: that page is what the module reports written.
 */
static void t_dirty_log_ioctl(void)
{
	struct kvmpfm_dirty_log log;
	struct pvpfm_pmu_info info;
	uint64_t gfns[64], gfn;
	uint32_t nr, more, fetches;
	struct hl_vcpu *v;
	struct hl_vm vm;
	bool found;
	int ret;

	if (!hl_check_vm("dirty_log_setup", hl_vm_simple(&vm, 1)))
		return;
	v = &vm.vcpus[0];
	ret = cb_pmu_info(&v->cb, &info);
	memset(&log, 0, sizeof(log));
	log.gfns = (uintptr_t)gfns;
	log.max = 64;
	log.reserved = 1;
	HL_EXPECT("dirty_log_reserved_einval",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_GET_DIRTY_LOG, &log), -EINVAL);
	HL_EXPECT("dirty_log_bad_struct_efault",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_GET_DIRTY_LOG, (void *)8), -EFAULT);
	HL_EXPECT("dirty_log_bad_gfns_efault",
		  hl_dirty_fetch(&vm, (uint64_t *)8, 64, &nr, &more), -EFAULT);
	/* what the failed fetch took is not lost: the next one has it */
	ret = ret ? ret : hl_dirty_fetch(&vm, gfns, 64, &nr, &more);
	t_check(!ret && has_gfn(gfns, nr, v->cmd_gpa) && !more,
		"dirty_log_after_efault_nothing_lost",
		"%s: %u gfns, the block's first page %sin them, more %u",
		hl_status_str(ret), nr,
		has_gfn(gfns, nr, v->cmd_gpa) ? "" : "not ", more);
	/* taken is forgotten */
	ret = hl_dirty_fetch(&vm, gfns, 64, &nr, &more);
	t_check(!ret && !nr && !more, "dirty_log_taken_forgotten",
		"%s: %u gfns, more %u", hl_status_str(ret), nr, more);
	/* the next DOORBELL writes the block again */
	ret = cb_pmu_info(&v->cb, &info);
	ret = ret ? ret : hl_dirty_fetch(&vm, gfns, 64, &nr, &more);
	t_check(!ret && has_gfn(gfns, nr, v->cmd_gpa),
		"dirty_log_doorbell_again",
		"%s: the block's first page %sin the %u gfns",
		hl_status_str(ret), has_gfn(gfns, nr, v->cmd_gpa) ? "" : "not ",
		nr);
	/*
	 * A fetch with room for one page makes progress: one page each time
	 * until none is left, the block's page among them
	 */
	ret = cb_pmu_info(&v->cb, &info);
	found = false;
	for (fetches = 0; !ret && fetches < 16; fetches++) {
		ret = hl_dirty_fetch(&vm, &gfn, 1, &nr, &more);
		if (ret || nr != 1)
			break;
		found |= gfn == v->cmd_gpa / HL_PAGE;
		if (!more)
			break;
	}
	t_check(!ret && nr == 1 && !more && found, "dirty_log_one_at_a_time",
		"%s after %u fetches of one: last %u gfns, more %u, the "
		"block's page %sseen", hl_status_str(ret), fetches + 1, nr,
		more, found ? "" : "not ");
	hl_vm_destroy(&vm);
}

int main(void)
{
	hl_init();
	t_unbound();
	t_bind_vm();
	t_bind_vcpu();
	t_event_map();
	t_block();
	t_limits();
	t_module_stats_unpriv();
	t_node_mode();
	t_event_map_unpriv();
	t_vcpu_ids();
	t_one_vm_binding();
	t_foreign_vcpu();
	t_mem_table();
	t_dirty_log_ioctl();
	hl_check_module_idle("ioctl_module_idle");
	return t_done();
}
