// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, the VM: KVM VM, guest RAM and vCPUs, the binding to
 * /dev/kvm-perfmon, the memory table from the VM's memslots, the
 * module's dirty log (hostlib.h, "set up / tear down").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "hostlib.h"
#include "internal.h"

static int vm_fail(struct hl_vm *vm, int err)
{
	hl_vm_destroy(vm);
	return err;
}

int hl_vm_bind(struct hl_vm *vm)
{
	struct kvmpfm_bind_vm b = vm->opts.bind;
	struct kvmpfm_event_map *map;
	size_t sz;
	int ret;

	vm->pfm_fd = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	if (vm->pfm_fd < 0)
		return -errno;
	b.nr_vcpus = vm->nr_vcpus;
	if (ioctl(vm->pfm_fd, KVMPFM_BIND_VM, &b))
		return -errno;
	/* the guest's RAM before any vCPU binds, as QEMU's listener does */
	ret = hl_mem_table_set(vm, vm->pfm_fd);
	if (ret)
		return ret;
	if (vm->opts.map) {
		sz = sizeof(*map) + vm->opts.map_nr * sizeof(map->entries[0]);
		map = calloc(1, sz);
		if (!map)
			return -ENOMEM;
		map->nr = vm->opts.map_nr;
		memcpy(map->entries, vm->opts.map,
		       vm->opts.map_nr * sizeof(map->entries[0]));
		ret = ioctl(vm->pfm_fd, KVMPFM_SET_EVENT_MAP, map) ? -errno : 0;
		free(map);
		if (ret)
			return ret;
	}
	return 0;
}

int hl_mem_table_set(struct hl_vm *vm, int pfm_fd)
{
	struct {
		struct kvmpfm_mem_table t;
		struct kvmpfm_mem_region r[HL_MAX_SLOTS];
	} m;
	const struct hl_memslot *s;
	int i;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < HL_MAX_SLOTS; i++) {
		s = &vm->slots[i];
		if (!s->size)
			continue;
		m.r[m.t.nr].gpa = s->gpa;
		m.r[m.t.nr].size = s->size;
		m.r[m.t.nr].uaddr = s->uaddr;
		if (s->flags & KVM_MEM_READONLY)
			m.r[m.t.nr].flags = KVMPFM_MEM_READONLY;
		m.t.nr++;
	}
	return HL_IOCTL(pfm_fd, KVMPFM_SET_MEM_TABLE, &m);
}

int hl_set_memslot(struct hl_vm *vm, uint32_t slot, uint32_t flags,
		   uint64_t gpa, uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (slot >= HL_MAX_SLOTS)
		return -EINVAL;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r))
		return -errno;
	vm->slots[slot] = (struct hl_memslot){
		.gpa = gpa,
		.size = size,
		.uaddr = size ? (uintptr_t)hva : 0,
		.flags = size ? flags : 0,
	};
	return vm->pfm_fd >= 0 ? hl_mem_table_set(vm, vm->pfm_fd) : 0;
}

int hl_vm_create(struct hl_vm *vm, const struct hl_vm_opts *opts)
{
	int i, ret, run_size;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = vm->pfm_fd = -1;
	for (i = 0; i < HL_MAX_VCPUS; i++) {
		vm->vcpus[i].fd = -1;
		vm->vcpus[i].efd = -1;
		vm->vcpus[i].cb.deliver = hl_deliver;
	}
	vm->opts = *opts;
	vm->nr_vcpus = opts->nr_vcpus;
	if (vm->nr_vcpus < 1 || vm->nr_vcpus > HL_MAX_VCPUS)
		return -EINVAL;
	vm->heap_next = HL_HEAP_GPA;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return vm_fail(vm, -errno);
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return vm_fail(vm, -errno);
	vm->mem = mmap(NULL, HL_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return vm_fail(vm, -errno);
	}
	/* 4 KiB host pages: each guest page faults on its own */
	madvise(vm->mem, HL_MEM_SIZE, MADV_NOHUGEPAGE);
	hl_guest_code_load(vm->mem);
	ret = hl_set_memslot(vm, 0, opts->dirty_log ? KVM_MEM_LOG_DIRTY_PAGES : 0,
			     0, HL_MEM_SIZE, vm->mem);
	if (ret)
		return vm_fail(vm, ret);
	if (opts->irqchip && ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0))
		return vm_fail(vm, -errno);

	run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size <= 0)
		return vm_fail(vm, -EINVAL);
	for (i = 0; i < vm->nr_vcpus; i++) {
		struct hl_vcpu *v = &vm->vcpus[i];

		v->vm = vm;
		v->index = i;
		v->cmd_gpa = HL_CMD_GPA(i);
		v->cmd = vm->mem + v->cmd_gpa;
		v->guest_tid = 1000 + i;
		v->guest_tgid = 1000;
		pthread_mutex_init(&v->mu, NULL);
		pthread_cond_init(&v->cv, NULL);
		v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU,
			      opts->vcpu_ids ? opts->vcpu_ids[i] : (uint32_t)i);
		if (v->fd < 0)
			return vm_fail(vm, -errno);
		v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, v->fd, 0);
		if (v->run == MAP_FAILED) {
			v->run = NULL;
			return vm_fail(vm, -errno);
		}
		v->run_size = run_size;
		v->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (v->efd < 0)
			return vm_fail(vm, -errno);
	}

	if (!opts->no_pfm) {
		ret = hl_vm_bind(vm);
		if (ret)
			return vm_fail(vm, ret);
	}
	if (opts->no_threads)
		return 0;
	for (i = 0; i < vm->nr_vcpus; i++) {
		ret = hl_vcpu_thread_start(&vm->vcpus[i]);
		if (ret)
			return vm_fail(vm, ret);
	}
	return 0;
}

struct hl_vm_opts hl_vm_opts_simple(int nr_vcpus)
{
	struct hl_vm_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = nr_vcpus;
	o.bind.personality = PVPFM_PERS_AMD64;
	return o;
}

int hl_vm_simple(struct hl_vm *vm, int nr_vcpus)
{
	struct hl_vm_opts o = hl_vm_opts_simple(nr_vcpus);

	return hl_vm_create(vm, &o);
}

bool hl_check_vm(const char *name, int ret)
{
	return t_check(!ret, name, "VM: %s", hl_errname(ret));
}

/* close *@fd if open, and mark it closed */
static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void hl_vm_close_pfm(struct hl_vm *vm)
{
	fd_close(&vm->pfm_fd);
}

void hl_vm_destroy(struct hl_vm *vm)
{
	int i;

	hl_vm_stop_threads(vm);
	hl_vm_close_pfm(vm);
	for (i = 0; i < HL_MAX_VCPUS; i++) {
		struct hl_vcpu *v = &vm->vcpus[i];

		if (v->run)
			munmap(v->run, v->run_size);
		v->run = NULL;
		fd_close(&v->fd);
		fd_close(&v->efd);
	}
	fd_close(&vm->vm_fd);
	fd_close(&vm->kvm_fd);
	if (vm->mem)
		munmap(vm->mem, HL_MEM_SIZE);
	vm->mem = NULL;
}

uint64_t hl_gpa_alloc(struct hl_vm *vm, uint64_t bytes)
{
	uint64_t gpa = vm->heap_next;

	bytes = (bytes + HL_PAGE - 1) & ~(HL_PAGE - 1);
	if (gpa + bytes > HL_MEM_SIZE)
		return 0;
	vm->heap_next += bytes;
	return gpa;
}

int hl_dirty_fetch(struct hl_vm *vm, uint64_t *gfns, uint32_t max,
		   uint32_t *nr, uint32_t *more)
{
	struct kvmpfm_dirty_log log = {
		.gfns = (uintptr_t)gfns,
		.max = max,
	};
	int ret = HL_IOCTL(vm->pfm_fd, KVMPFM_GET_DIRTY_LOG, &log);

	*nr = ret ? 0 : log.nr;
	*more = ret ? 0 : log.more;
	return ret;
}

int hl_dirty_log(struct hl_vm *vm, uint8_t bitmap[HL_DIRTY_BYTES])
{
	uint64_t gfns[64];
	uint32_t nr, more, i;
	int ret;

	memset(bitmap, 0, HL_DIRTY_BYTES);
	do {
		ret = hl_dirty_fetch(vm, gfns, 64, &nr, &more);
		if (ret)
			return ret;
		for (i = 0; i < nr; i++)
			if (gfns[i] < HL_MEM_SIZE / HL_PAGE)
				bitmap[gfns[i] / 8] |= 1 << (gfns[i] % 8);
	} while (more);
	return 0;
}

uint64_t hl_eventfd_read(struct hl_vcpu *v)
{
	uint64_t n = 0;

	if (read(v->efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}
