// SPDX-License-Identifier: GPL-2.0
/*
 * t_ioctl: /dev/kvm-perfmon's host ioctls (kvm_perfmon.h) and the command
 * block header checks, with a real KVM VM.
 *
 * Binding: BIND_VM refuses what is not a VM fd of the calling process, bad
 * reserved fields and personalities, a second binding; BIND_VCPU,
 * SET_CMD_BLOCK, SET_EVENTFD refuse bad indexes, gpas and fds; DOORBELL
 * comes only from the bound vCPU thread, after its command block is set.
 * Command blocks: bad version, command, argument sizes, vector lengths and
 * context ids answer in the block's status, the ioctl succeeding.
 * Issue 9: every per-VM limit bounded by its host-wide ceiling (E2BIG
 * above), and usable up to it; module-wide stats refused to a host user
 * without CAP_PERFMON (EPERM); BIND_VCPU's index is a vcpu_id, or the
 * vCPU the calling thread runs, never the creation order; the node is
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

	if (!hl_check(fd >= 0, "open_dev", "open %s: %s", KVMPFM_DEVICE,
		      hl_errname(errno)))
		return;
	hl_check(ioctl(fd, KVMPFM_GET_API_VERSION, 0) == KVMPFM_API_VERSION,
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

static int bind_with(int vm_fd, const struct kvmpfm_bind_vm *in)
{
	struct kvmpfm_bind_vm b = *in;
	int fd = open(KVMPFM_DEVICE, O_RDWR), ret;

	if (fd < 0)
		return HL_IOCTL_ERR(errno);
	b.vm_fd = vm_fd;
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
	struct hl_vm_opts o;
	struct hl_vm vm;
	int null_fd, fd, ret, st;
	pid_t pid;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_pfm = true;
	o.no_threads = true;
	ret = hl_vm_create(&vm, &o);
	if (!hl_check(!ret, "bind_vm_setup", "VM: %s", hl_errname(ret)))
		return;

	memset(&ok, 0, sizeof(ok));
	ok.nr_vcpus = 2;
	ok.personality = PVPFM_PERS_AMD64;

	HL_EXPECT("bind_vm_fd_minus1_ebadf", bind_with(-1, &ok), -EBADF);
	null_fd = open("/dev/null", O_RDWR);
	HL_EXPECT("bind_vm_devnull_einval", bind_with(null_fd, &ok), -EINVAL);
	close(null_fd);
	HL_EXPECT("bind_vm_kvm_system_fd_einval", bind_with(vm.kvm_fd, &ok),
		  -EINVAL);
	/* a vCPU fd is a KVM fd too, but not a VM */
	HL_EXPECT("bind_vm_vcpu_fd_einval", bind_with(vm.vcpus[0].fd, &ok),
		  -EINVAL);

	b = ok;
	b.reserved[3] = 1;
	HL_EXPECT("bind_vm_reserved_einval", bind_with(vm.vm_fd, &b), -EINVAL);
	b = ok;
	b.reserved1 = 1;
	HL_EXPECT("bind_vm_reserved1_einval", bind_with(vm.vm_fd, &b), -EINVAL);
	b = ok;
	b.nr_vcpus = 0;
	HL_EXPECT("bind_vm_zero_vcpus_einval", bind_with(vm.vm_fd, &b), -EINVAL);
	b = ok;
	b.nr_vcpus = 100000;
	HL_EXPECT("bind_vm_huge_vcpus_einval", bind_with(vm.vm_fd, &b), -EINVAL);
	/* at most the vCPUs the VM may have (KVM_CAP_MAX_VCPUS) */
	b.nr_vcpus = ioctl(vm.vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	HL_EXPECT("bind_vm_max_vcpus_ok", bind_with(vm.vm_fd, &b), 0);
	b.nr_vcpus++;
	HL_EXPECT("bind_vm_above_max_vcpus_einval", bind_with(vm.vm_fd, &b),
		  -EINVAL);
	b = ok;
	b.personality = 99;
	HL_EXPECT("bind_vm_bad_personality_einval", bind_with(vm.vm_fd, &b),
		  -EINVAL);
	b = ok;
	b.counters = 4;	/* counters are for intel_arch only */
	HL_EXPECT("bind_vm_amd_counters_einval", bind_with(vm.vm_fd, &b),
		  -EINVAL);
	b = ok;
	b.personality = PVPFM_PERS_INTEL_ARCH;
	b.counters = 17;
	HL_EXPECT("bind_vm_intel_17_counters_einval", bind_with(vm.vm_fd, &b),
		  -EINVAL);
	b.counters = 8;
	HL_EXPECT("bind_vm_intel_8_counters_ok", bind_with(vm.vm_fd, &b), 0);
	b = ok;
	b.personality = PVPFM_PERS_AMD64_K8;
	HL_EXPECT("bind_vm_k8_ok", bind_with(vm.vm_fd, &b), 0);
	b.personality = PVPFM_PERS_AUTO;
	HL_EXPECT("bind_vm_auto_ok", bind_with(vm.vm_fd, &b), 0);

	/* the same file twice; BIND_VM returns what the guest is given */
	fd = open(KVMPFM_DEVICE, O_RDWR);
	b = ok;
	b.personality = PVPFM_PERS_AUTO;
	b.vm_fd = vm.vm_fd;
	HL_EXPECT("bind_vm_first_ok", HL_IOCTL(fd, KVMPFM_BIND_VM, &b), 0);
	hl_check(b.personality == host_personality() && b.counters ==
		 pvpfm_pers_desc(host_personality())->counters,
		 "bind_vm_auto_resolved", "personality %u counters %u",
		 b.personality, b.counters);
	HL_EXPECT("bind_vm_twice_ebusy", HL_IOCTL(fd, KVMPFM_BIND_VM, &b), -EBUSY);
	HL_EXPECT("unknown_ioctl_enotty",
		  HL_IOCTL(fd, _IO(KVMPFM_IO, 0x7f), 0UL), -ENOTTY);
	close(fd);

	/* another process's VM (the fd is inherited, the mm is not) */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(-bind_with(vm.vm_fd, &ok) & 0xff);
	st = 0;
	waitpid(pid, &st, 0);
	hl_check(WIFEXITED(st) && WEXITSTATUS(st) == EPERM,
		 "bind_vm_other_process_eperm", "child got %s",
		 WIFEXITED(st) ? hl_errname(WEXITSTATUS(st)) : "killed");
	hl_vm_destroy(&vm);
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

	/* vCPU 1 is bound to no thread: not ours to ring */
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

static void t_bind_vcpu(void)
{
	struct vcpu_ioctls r;
	struct hl_vm_opts o;
	struct hl_vm vm;
	struct kvmpfm_cmd_block cb = { .vcpu = 1, .gpa = HL_CMD_GPA(1) };
	int ret;

	/* nr_vcpus 3 in BIND_VM, only 2 KVM vCPUs */
	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_bind_vcpus = true;
	o.bind.personality = PVPFM_PERS_AMD64;
	o.bind.nr_vcpus = 3;	/* overridden by hostlib: bind by hand below */
	ret = hl_vm_create(&vm, &o);
	if (!hl_check(!ret, "bind_vcpu_setup", "VM: %s", hl_errname(ret)))
		return;

	memset(&r, 0, sizeof(r));
	ret = hl_call(&vm.vcpus[0], vcpu0_ioctls, &r);
	if (!hl_check(!ret, "bind_vcpu_first_ok", "BIND_VCPU: %s",
		      hl_errname(ret)))
		goto out;
	HL_EXPECT("bind_vcpu_again_same_thread_ok", r.bind_again, 0);
	HL_EXPECT("bind_vcpu_second_index_ok", r.bind_other, 0);
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
	/* vCPU 1 was bound by vCPU 0's thread (above): that thread owns it */
	HL_EXPECT("doorbell_vcpu1_no_block_enxio", r.db_other_index, -ENXIO);
	HL_EXPECT("doorbell_ok", r.db_ok, 0);

	/* vCPU 1 is vCPU 0's thread's now: its own thread is refused */
	HL_EXPECT("bind_vcpu_taken_ebusy", hl_call(&vm.vcpus[1], bind_self, NULL),
		  -EBUSY);
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

	/* BIND_VM says 3 vCPUs, KVM has 2: vCPU 2 has no KVM vCPU */
	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_pfm = true;
	ret = hl_vm_create(&vm, &o);
	if (!ret) {
		struct kvmpfm_bind_vm b = { .vm_fd = vm.vm_fd, .nr_vcpus = 3,
					    .personality = PVPFM_PERS_AMD64 };

		vm.pfm_fd = open(KVMPFM_DEVICE, O_RDWR);
		ret = HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VM, &b);
		if (!ret)
			ret = HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VCPU, 2UL);
		HL_EXPECT("bind_vcpu_no_kvm_vcpu_enoent", ret, -ENOENT);
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

	ret = hl_vm_simple(&vm, 1);
	if (!hl_check(!ret, "event_map_setup", "VM: %s", hl_errname(ret)))
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
		hl_check(false, name, "DOORBELL ioctl failed: %s",
			 hl_errname(ret));
		return;
	}
	hl_check(status == want, name, "status %s, want %s",
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

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 1;
	o.bind.personality = PVPFM_PERS_AMD64;
	o.bind.max_vector = 2;
	ret = hl_vm_create(&vm, &o);
	if (!hl_check(!ret, "block_setup", "VM: %s", hl_errname(ret)))
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
	hl_check(!ret && st1.doorbells - st0.doorbells == 16 &&
		 st1.commands - st0.commands == 16 &&
		 st1.command_errors - st0.command_errors == 15,
		 "vm_stats_count_commands",
		 "ret %d doorbells +%llu commands +%llu errors +%llu", ret,
		 (unsigned long long)(st1.doorbells - st0.doorbells),
		 (unsigned long long)(st1.commands - st0.commands),
		 (unsigned long long)(st1.command_errors - st0.command_errors));
	hl_check(st1.contexts == 1 && st1.sets == 1 && !st1.loaded,
		 "vm_stats_contexts", "contexts %u sets %u loaded %u",
		 st1.contexts, st1.sets, st1.loaded);
	hl_vm_destroy(&vm);
}

/* ---- issue 9: limits and their ceilings (item 1) ---------------------- */

/*
 * BIND_VM with one limit at each value of the issue's sweep, and at the
 * ceiling and one above: E2BIG above the ceiling, else bound. Before,
 * everything was bound (2^28 contexts or sets
 * WARNed in kvmalloc; a 2^44 buffer limit let a guest oops the host).
 */
static void t_limits_sweep(struct hl_vm *vm, const uint64_t *ceil)
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
			ret = bind_with(vm->vm_fd, &b);
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
	if (!hl_check(!ret, "limits_ceiling_bind_ok", "VM: %s", hl_errname(ret)))
		return;
	v = &vm.vcpus[0];
	ret = cb_pmu_info(&v->cb, &info);
	for (l = 0; l < HL_LIM_N; l++)
		if (!ret && hl_lim_of_info(&info, l) != ceil[l])
			ret = -ERANGE;
	hl_check(!ret, "limits_ceiling_pmu_info", "%s: contexts %u sets %u "
		 "vector %u smpl_buf %" PRIu64, hl_status_str(ret),
		 info.max_contexts, info.max_sets, info.max_vector,
		 (uint64_t)info.max_smpl_buf);

	/* every context, then one more */
	n = ceil[HL_LIM_CONTEXTS];
	ids = calloc(n, sizeof(*ids));
	for (i = 0, ret = 0; ids && i < n && !ret; i++)
		ret = cb_create(&v->cb, 0, &ids[i]);
	hl_check(ids && !ret, "limits_ceiling_all_contexts",
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
	hl_check(sets && !ret, "limits_ceiling_all_sets", "%s",
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
	if (!hl_check(!ret, "limits_one_bind_ok", "VM: %s", hl_errname(ret)))
		return;
	v = &vm.vcpus[0];
	ret = cb_pmu_info(&v->cb, &info);
	hl_check(!ret && info.max_contexts == 1 && info.max_sets == 1 &&
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
	struct hl_vm_opts o;
	struct hl_vm vm;
	int l, ret;
	bool ok = true;

	for (l = 0; l < HL_LIM_N; l++) {
		ceil[l] = hl_ceiling(l);
		ok &= ceil[l] == dfl[l];
	}
	hl_check(ok, "limits_ceilings_default", "contexts %" PRIu64
		 " sets %" PRIu64 " vector %" PRIu64 " smpl_buf %" PRIu64,
		 ceil[0], ceil[1], ceil[2], ceil[3]);
	/* a module without them is held to the documented defaults */
	for (l = 0; l < HL_LIM_N; l++)
		if (!ceil[l])
			ceil[l] = dfl[l];

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 1;
	o.no_pfm = true;
	o.no_threads = true;
	ret = hl_vm_create(&vm, &o);
	if (!hl_check(!ret, "limits_setup", "VM: %s", hl_errname(ret)))
		return;
	t_limits_sweep(&vm, ceil);
	hl_vm_destroy(&vm);
	t_limits_one();
	t_limits_at_ceiling(ceil);
}

/* ---- issue 9: module stats for the operator only (item 10) ------------ */

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
static void t_module_stats_unpriv(void)
{
	struct kvmpfm_module_stats st;
	struct unpriv_result r;
	struct stat sb;
	int fds[2], st_code = 0;
	pid_t pid;

	HL_EXPECT("module_stats_root_ok", hl_module_stats(&st), 0);
	if (!stat(KVMPFM_DEVICE, &sb))
		hl_note("note: %s is mode %04o uid %d gid %d", KVMPFM_DEVICE,
			(unsigned int)(sb.st_mode & 07777), (int)sb.st_uid,
			(int)sb.st_gid);
	if (pipe(fds)) {
		hl_check(false, "module_stats_unpriv_setup", "pipe: %s",
			 hl_errname(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(KVMPFM_DEVICE, O_RDWR), fd2;

		memset(&r, 0, sizeof(r));
		if (fd < 0 || setgroups(0, NULL) || setgid(65534) ||
		    setuid(65534))
			_exit(2);
		r.uid = getuid();
		r.api = ioctl(fd, KVMPFM_GET_API_VERSION, 0);
		r.stats = HL_IOCTL(fd, KVMPFM_GET_MODULE_STATS, &st);
		fd2 = open(KVMPFM_DEVICE, O_RDWR);
		r.reopen = fd2 < 0 ? -errno : 0;
		r.stats_reopen = fd2 < 0 ? 0 :
				 HL_IOCTL(fd2, KVMPFM_GET_MODULE_STATS, &st);
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	memset(&r, 0, sizeof(r));
	r.api = -1;
	if (read(fds[0], &r, sizeof(r)) != sizeof(r))
		r.uid = -1;
	close(fds[0]);
	waitpid(pid, &st_code, 0);
	if (!hl_check(WIFEXITED(st_code) && !WEXITSTATUS(st_code) &&
		      r.uid == 65534, "module_stats_unpriv_child",
		      "child status %#x uid %d", st_code, r.uid))
		return;
	hl_check(r.api == KVMPFM_API_VERSION, "module_stats_unpriv_fd_usable",
		 "GET_API_VERSION %d", r.api);
	HL_EXPECT("module_stats_unpriv_eperm", r.stats, -EPERM);
	if (r.reopen)
		hl_note("note: uid 65534 cannot open %s itself: %s",
			KVMPFM_DEVICE, hl_errname(r.reopen));
	else
		HL_EXPECT("module_stats_unpriv_own_open_eperm",
			  r.stats_reopen, -EPERM);
}

/*
 * Issue 9 item 2: the node is 0660 (root and, by udev rule, group kvm;
 * the rig's L1 has devtmpfs only, so root:root), never world-accessible.
 */
static void t_node_mode(void)
{
	struct stat sb;

	if (!hl_check(!stat(KVMPFM_DEVICE, &sb), "node_mode_stat", "%s: %s",
		      KVMPFM_DEVICE, hl_errname(errno)))
		return;
	hl_check((sb.st_mode & 07777) == 0660, "node_mode_0660",
		 "%s is mode %04o", KVMPFM_DEVICE,
		 (unsigned int)(sb.st_mode & 07777));
	hl_check(!(sb.st_mode & 0007), "node_not_world_accessible",
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
 * Issue 9 item 2: an event map whose aliases count outside the guest
 * (SOFTWARE: the vCPU thread in host kernel mode too) needs CAP_PERFMON,
 * as perf would demand; guest-only PMU aliases do not (KVM's vPMU gives
 * any guest as much). A child makes its VM as root, drops to uid/gid
 * 65534 and sets maps on it.
 */
static void t_event_map_unpriv(void)
{
	struct kvmpfm_event_map_entry sw, hw[2], cache, raw;
	struct map_unpriv_result r;
	int fds[2], st_code = 0;
	pid_t pid;

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

	if (pipe(fds)) {
		hl_check(false, "event_map_unpriv_setup", "pipe: %s",
			 hl_errname(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct hl_vm vm;

		memset(&r, 0, sizeof(r));
		r.setup = hl_vm_simple(&vm, 1);
		if (!r.setup && (setgroups(0, NULL) || setgid(65534) ||
				 setuid(65534)))
			r.setup = -errno;
		if (!r.setup) {
			r.uid = getuid();
			r.sw = set_map(&vm, &sw, 1, 0);
			r.sw_hw = set_map(&vm, hw, 2, 0);
			r.hw = set_map(&vm, hw, 1, 0);
			r.cache = set_map(&vm, &cache, 1, 0);
			r.raw = set_map(&vm, &raw, 1, 0);
			r.empty = set_map(&vm, NULL, 0, 0);
		}
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	memset(&r, 0, sizeof(r));
	r.setup = -EIO;
	if (read(fds[0], &r, sizeof(r)) != sizeof(r))
		r.setup = -EIO;
	close(fds[0]);
	waitpid(pid, &st_code, 0);
	if (!hl_check(WIFEXITED(st_code) && !WEXITSTATUS(st_code) &&
		      !r.setup && r.uid == 65534, "event_map_unpriv_child",
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

/* ---- issue 9: vCPUs by vcpu_id, not creation order (item 11) ---------- */

struct bind_req {
	unsigned long index;
	bool run_first;		/* KVM_RUN the thread's vCPU before binding */
	int run, bind, db;	/* results: 0 or -errno; db: the block's */
};

/* on a vCPU thread: maybe run its vCPU, bind @index, ring one PMU_INFO */
static int bind_index_fn(struct hl_vcpu *v, void *p)
{
	struct kvmpfm_cmd_block cb = { .vcpu = 0, .gpa = v->cmd_gpa };
	struct bind_req *r = p;
	struct pvpfm_cmd_hdr *h = v->cmd;
	int pfm = v->vm->pfm_fd;

	r->run = r->run_first ? hl_run_io(v, 1) : 0;
	r->bind = HL_IOCTL(pfm, KVMPFM_BIND_VCPU, r->index);
	r->db = -ENOTCONN;
	if (r->bind)
		return 0;
	cb.vcpu = r->index;
	if (ioctl(pfm, KVMPFM_SET_CMD_BLOCK, &cb))
		return 0;
	memset(h, 0, sizeof(*h) + sizeof(struct pvpfm_pmu_info));
	h->version = PVPFM_ABI_VERSION;
	h->cmd = PVPFM_CMD_PMU_INFO;
	h->arg_size = sizeof(struct pvpfm_pmu_info);
	h->status = 0x7fffffff;
	r->db = HL_IOCTL(pfm, KVMPFM_DOORBELL, r->index);
	if (!r->db)
		r->db = h->status;
	return 0;
}

/* KVM vCPUs with ids 3 and 1 (created in that order), bound by hand */
static int ids_vm(struct hl_vm *vm, uint32_t nr_bind)
{
	static const uint32_t ids[] = { 3, 1 };
	struct kvmpfm_bind_vm b;
	struct hl_vm_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = 2;
	o.no_pfm = true;
	o.vcpu_ids = ids;
	ret = hl_vm_create(vm, &o);
	if (ret)
		return ret;
	memset(&b, 0, sizeof(b));
	b.vm_fd = vm->vm_fd;
	b.nr_vcpus = nr_bind;
	b.personality = PVPFM_PERS_AMD64;
	vm->pfm_fd = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	ret = vm->pfm_fd < 0 ? -errno : HL_IOCTL(vm->pfm_fd, KVMPFM_BIND_VM, &b);
	if (ret)
		hl_vm_destroy(vm);
	return ret;
}

static void t_vcpu_ids(void)
{
	struct bind_req r;
	struct hl_vm vm;
	int ret;

	/*
	 * No thread has run a vCPU: index i is the vCPU whose id is i. The
	 * first vCPU created (id 3) is not index 0, which has no vCPU.
	 */
	ret = ids_vm(&vm, 4);
	if (!hl_check(!ret, "vcpu_ids_setup", "VM: %s", hl_errname(ret)))
		return;
	HL_EXPECT("vcpu_ids_index0_no_id0_enoent",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VCPU, 0UL), -ENOENT);
	HL_EXPECT("vcpu_ids_index2_no_id2_enoent",
		  HL_IOCTL(vm.pfm_fd, KVMPFM_BIND_VCPU, 2UL), -ENOENT);
	memset(&r, 0, sizeof(r));
	r.index = 3;
	hl_call(&vm.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("vcpu_ids_index3_is_id3_ok", r.bind, 0);
	HL_EXPECT("vcpu_ids_index3_doorbell_ok", r.db, 0);
	memset(&r, 0, sizeof(r));
	r.index = 1;
	hl_call(&vm.vcpus[1], bind_index_fn, &r);
	HL_EXPECT("vcpu_ids_index1_is_id1_ok", r.bind, 0);
	HL_EXPECT("vcpu_ids_index1_doorbell_ok", r.db, 0);
	hl_vm_destroy(&vm);

	/*
	 * A thread that has run its vCPU binds that vCPU, whatever the
	 * index: QEMU's cpu index is not KVM's vcpu_id (the APIC id) on
	 * every topology. No id 0 exists: only the thread's vCPU fits.
	 */
	ret = ids_vm(&vm, 2);
	if (!hl_check(!ret, "vcpu_ids_thread_setup", "VM: %s",
		      hl_errname(ret)))
		return;
	memset(&r, 0, sizeof(r));
	r.index = 0;
	r.run_first = true;
	hl_call(&vm.vcpus[0], bind_index_fn, &r);
	HL_EXPECT("vcpu_ids_thread_ran_vcpu", r.run, 0);
	HL_EXPECT("vcpu_ids_thread_index0_is_its_vcpu_ok", r.bind, 0);
	HL_EXPECT("vcpu_ids_thread_index0_doorbell_ok", r.db, 0);
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
	hl_check_module_idle("ioctl_module_idle");
	return hl_summary();
}
