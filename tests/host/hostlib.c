// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib: see hostlib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <regex.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "hostlib.h"

int hl_passed, hl_failed;

/* ---- results -------------------------------------------------------------- */

bool hl_check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS: %s\n", name);
		hl_passed++;
	} else {
		printf("FAIL: %s (", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")\n");
		hl_failed++;
	}
	fflush(stdout);
	return ok;
}

void hl_note(const char *fmt, ...)
{
	va_list ap;

	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int hl_summary(void)
{
	printf("%d passed, %d failed\n", hl_passed, hl_failed);
	fflush(stdout);
	return hl_failed ? 1 : 0;
}

const char *hl_errname(int err)
{
	static const struct { int e; const char *n; } names[] = {
		{ 0, "0" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" },
		{ ESRCH, "ESRCH" }, { EINTR, "EINTR" }, { EIO, "EIO" },
		{ ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" },
		{ ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" }, { ENOSYS, "ENOSYS" },
		{ EPROTO, "EPROTO" }, { ENOBUFS, "ENOBUFS" },
		{ ENOTCONN, "ENOTCONN" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	};
	static __thread char buf[24];
	unsigned int i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static const char *status_fmt(char *buf, size_t len, int status)
{
	if (!status)
		return "0";
	if (HL_IS_IOCTL_ERR(status))
		snprintf(buf, len, "ioctl:%s", hl_errname(-(status + 10000)));
	else
		snprintf(buf, len, "-%s", hl_errname(status));
	return buf;
}

const char *hl_status_str2(int status)
{
	static __thread char buf[40];

	return status_fmt(buf, sizeof(buf), status);
}

const char *hl_status_str(int status)
{
	static __thread char buf[40];

	return status_fmt(buf, sizeof(buf), status);
}

/* ---- signals: kicking a vCPU out of KVM_RUN ------------------------------- */

static __thread struct kvm_run *cur_run;

static void kick_handler(int sig)
{
	(void)sig;
	if (cur_run)
		cur_run->immediate_exit = 1;
}

void hl_init(void)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: KVM_RUN returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- vCPU threads ----------------------------------------------------------- */

bool hl_on_vcpu(const struct hl_vcpu *v)
{
	return v->tid && v->tid == (pid_t)syscall(SYS_gettid);
}

int hl_vcpu_bind(struct hl_vcpu *v)
{
	struct hl_vm *vm = v->vm;
	struct kvmpfm_cmd_block cb = { .vcpu = v->index, .gpa = v->cmd_gpa };
	struct kvmpfm_eventfd ef = { .vcpu = v->index, .fd = v->efd };

	if (ioctl(vm->pfm_fd, KVMPFM_BIND_VCPU, (unsigned long)v->index))
		return -errno;
	if (ioctl(vm->pfm_fd, KVMPFM_SET_CMD_BLOCK, &cb))
		return -errno;
	if (ioctl(vm->pfm_fd, KVMPFM_SET_EVENTFD, &ef))
		return -errno;
	return 0;
}

int hl_vcpu_bind_fn(struct hl_vcpu *v, void *unused)
{
	(void)unused;
	return hl_vcpu_bind(v);
}

/*
 * Every thread that runs a vCPU on host CPU 0 (HL_PIN_VCPUS=N: CPU N,
 * =none: no pinning). The rig's L1 (QEMU 7.2 multi-threaded TCG, 2 CPUs,
 * kvm-amd nested) corrupts its own memory when guests run on both of
 * its CPUs: a plain KVM VM whose 4 vCPU threads run a real-mode OUT
 * loop, kvm-perfmon not even loaded, panics L1 within a minute
 * ("corrupted stack end detected inside scheduler") or livelocks a
 * vCPU in NPF exits. With -accel tcg,thread=single (or -smp 1) it
 * does not, and no pinning is needed (see README). The module's
 * cross-CPU work (IPIs from its work items) is exercised either way.
 */
static void pin_vcpu_thread(void)
{
	const char *pin = getenv("HL_PIN_VCPUS");

	if (!pin)
		pin = "0";
	if (strcmp(pin, "none"))
		hl_pin_cpu(atoi(pin));
}

struct new_thread {
	int (*fn)(void *);
	void *arg;
	int ret;
};

static void *new_thread_main(void *p)
{
	struct new_thread *t = p;

	pin_vcpu_thread();
	t->ret = t->fn(t->arg);
	return NULL;
}

int hl_on_new_thread(int (*fn)(void *), void *arg)
{
	struct new_thread t = { fn, arg, 0 };
	pthread_t th;

	if (pthread_create(&th, NULL, new_thread_main, &t))
		return -EAGAIN;
	pthread_join(th, NULL);
	return t.ret;
}

static void *vcpu_thread(void *p)
{
	struct hl_vcpu *v = p;

	v->tid = (pid_t)syscall(SYS_gettid);
	cur_run = v->run;
	pin_vcpu_thread();
	if (v->vm->pfm_fd >= 0 && !v->vm->opts.no_bind_vcpus)
		v->bind_err = hl_vcpu_bind(v);

	pthread_mutex_lock(&v->mu);
	v->state = 2;		/* started: hl_vm_create waits for it */
	pthread_cond_broadcast(&v->cv);
	for (;;) {
		while (v->state != 1 && !v->quit)
			pthread_cond_wait(&v->cv, &v->mu);
		if (v->state != 1 && v->quit)
			break;
		pthread_mutex_unlock(&v->mu);
		v->ret = v->fn(v, v->arg);
		pthread_mutex_lock(&v->mu);
		v->state = 2;
		pthread_cond_broadcast(&v->cv);
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

void hl_call_async(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *),
		   void *arg)
{
	pthread_mutex_lock(&v->mu);
	while (v->state == 1)
		pthread_cond_wait(&v->cv, &v->mu);
	v->fn = fn;
	v->arg = arg;
	v->state = 1;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
}

int hl_call_wait(struct hl_vcpu *v)
{
	int ret;

	pthread_mutex_lock(&v->mu);
	while (v->state == 1)
		pthread_cond_wait(&v->cv, &v->mu);
	ret = v->ret;
	pthread_mutex_unlock(&v->mu);
	return ret;
}

int hl_call(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *), void *arg)
{
	if (hl_on_vcpu(v))
		return fn(v, arg);
	hl_call_async(v, fn, arg);
	return hl_call_wait(v);
}

int hl_kick_and_wait(struct hl_vcpu *v)
{
	struct timespec ts = { 0, 2000000 };
	bool done;

	v->stop = 1;
	for (;;) {
		pthread_mutex_lock(&v->mu);
		done = v->state != 1;
		pthread_mutex_unlock(&v->mu);
		if (done)
			break;
		pthread_kill(v->thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return hl_call_wait(v);
}

/* ---- the VM ------------------------------------------------------------------ */

/* real-mode code snippets, see hostlib.h */
static const uint8_t code_io[] = {
	0xe6, HL_PORT_IO,		/* 0: out HL_PORT_IO, al */
	0xe2, 0xfc,			/* 2: loop 0 */
	0xe6, HL_PORT_DONE,		/* 4: out HL_PORT_DONE, al */
	0xf4,				/* 6: hlt */
	0xeb, 0xfd,			/* 7: jmp 6 */
};
static const uint8_t code_touch[] = {
	0x8e, 0xc2,			/* 0: mov es, dx */
	0x26, 0xc6, 0x06, 0x00, 0x00, 0x01, /* 2: mov byte es:[0], 1 */
	0x81, 0xc2, 0x00, 0x01,		/* 8: add dx, 0x100 (4 KiB) */
	0xe2, 0xf2,			/* 12: loop 0 */
	0xe6, HL_PORT_DONE,		/* 14: out HL_PORT_DONE, al */
	0xf4,				/* 16: hlt */
	0xeb, 0xfd,			/* 17: jmp 16 */
};
static const uint8_t code_spin[] = { 0xeb, 0xfe };	/* jmp $ */
static const uint8_t code_hlt[] = { 0xf4, 0xeb, 0xfd };	/* hlt; jmp hlt */

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

static int hl_deliver(struct cb_caller *c, struct cb_cmd *cmd);

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
	memcpy(vm->mem + HL_CODE_IO, code_io, sizeof(code_io));
	memcpy(vm->mem + HL_CODE_TOUCH, code_touch, sizeof(code_touch));
	memcpy(vm->mem + HL_CODE_SPIN, code_spin, sizeof(code_spin));
	memcpy(vm->mem + HL_CODE_HLT, code_hlt, sizeof(code_hlt));
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
		struct hl_vcpu *v = &vm->vcpus[i];

		if (pthread_create(&v->thread, NULL, vcpu_thread, v))
			return vm_fail(vm, -EAGAIN);
		pthread_mutex_lock(&v->mu);
		while (v->state != 2)
			pthread_cond_wait(&v->cv, &v->mu);
		v->state = 0;
		pthread_mutex_unlock(&v->mu);
		if (v->bind_err)
			return vm_fail(vm, v->bind_err);
	}
	return 0;
}

int hl_vm_simple(struct hl_vm *vm, int nr_vcpus)
{
	struct hl_vm_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_vcpus = nr_vcpus;
	o.bind.personality = PVPFM_PERS_AMD64;
	return hl_vm_create(vm, &o);
}

void hl_vm_stop_threads(struct hl_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		struct hl_vcpu *v = &vm->vcpus[i];

		if (!v->tid)
			continue;
		pthread_mutex_lock(&v->mu);
		v->quit = true;
		pthread_cond_broadcast(&v->cv);
		pthread_mutex_unlock(&v->mu);
		pthread_join(v->thread, NULL);
		v->tid = 0;
	}
}

void hl_vm_close_pfm(struct hl_vm *vm)
{
	if (vm->pfm_fd >= 0)
		close(vm->pfm_fd);
	vm->pfm_fd = -1;
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
		if (v->fd >= 0)
			close(v->fd);
		v->fd = -1;
		if (v->efd >= 0)
			close(v->efd);
		v->efd = -1;
	}
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	vm->vm_fd = -1;
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->kvm_fd = -1;
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

/* ---- commands ---------------------------------------------------------------- */

static __thread struct hl_hist *hist;

void hl_hist_attach(struct hl_hist *h)
{
	hist = h;
}

static void hist_add(int ioctl_ret, int status)
{
	if (!hist)
		return;
	hist->doorbells++;
	if (ioctl_ret) {
		if (-ioctl_ret < HL_MAX_ERRNO)
			hist->ioctl_err[-ioctl_ret]++;
		else
			hist->other++;
	} else if (!status) {
		hist->ok++;
	} else if (status < 0 && -status < HL_MAX_ERRNO) {
		hist->status[-status]++;
	} else {
		hist->other++;
	}
}

int hl_doorbell(struct hl_vcpu *v)
{
	return ioctl(v->vm->pfm_fd, KVMPFM_DOORBELL, (unsigned long)v->index) ?
	       -errno : 0;
}

int hl_pmu_info_doorbell(int pfm_fd, unsigned long index, void *block)
{
	struct pvpfm_cmd_hdr *h = block;

	memset(h, 0, sizeof(*h) + sizeof(struct pvpfm_pmu_info));
	h->version = PVPFM_ABI_VERSION;
	h->cmd = PVPFM_CMD_PMU_INFO;
	h->arg_size = sizeof(struct pvpfm_pmu_info);
	h->status = 0x7fffffff;
	if (ioctl(pfm_fd, KVMPFM_DOORBELL, index))
		return -errno;
	return h->status;
}

struct raw_req {
	const void *block;
	size_t len;
};

static int raw_fn(struct hl_vcpu *v, void *p)
{
	struct raw_req *r = p;

	int ret;

	memcpy(v->cmd, r->block, r->len);
	if (hist) {
		hist->cur_cmd = ((const struct pvpfm_cmd_hdr *)r->block)->cmd;
		hist->in_doorbell = true;
	}
	ret = hl_doorbell(v);
	if (hist)
		hist->in_doorbell = false;
	hist_add(ret, ((struct pvpfm_cmd_hdr *)v->cmd)->status);
	return ret;
}

int hl_doorbell_raw(struct hl_vcpu *v, const void *block, size_t len)
{
	struct raw_req r = { block, len };

	if (len > PVPFM_CMD_BLOCK_SIZE)
		return -EINVAL;
	return hl_call(v, raw_fn, &r);
}

/* on the vCPU thread: the block into guest RAM, DOORBELL, results back */
static int cmd_fn(struct hl_vcpu *v, void *p)
{
	struct cb_cmd *r = p;
	struct pvpfm_cmd_hdr *hdr = v->cmd;
	int ret;

	if (!cb_fill(v->cmd, r, v->guest_tid, v->guest_tgid))
		return -E2BIG;
	if (hist) {
		hist->cur_cmd = r->cmd;
		hist->in_doorbell = true;
	}
	ret = hl_doorbell(v);
	if (hist)
		hist->in_doorbell = false;
	hist_add(ret, hdr->status);
	if (ret) {
		v->cb.hdr = *hdr;
		return HL_IOCTL_ERR(-ret);
	}
	return cb_unfill(v->cmd, &v->cb, r);
}

static int hl_deliver(struct cb_caller *c, struct cb_cmd *cmd)
{
	struct hl_vcpu *v = CB_CONTAINER(c, struct hl_vcpu, cb);

	return hl_call(v, cmd_fn, cmd);
}

int hl_deliver_here(struct cb_caller *c, struct cb_cmd *cmd)
{
	return cmd_fn(CB_CONTAINER(c, struct hl_vcpu, cb), cmd);
}

uint32_t hl_sets_ctx(struct hl_vcpu *v, const char *who, pfarg_setdesc_t *d,
		     uint32_t nsets, pfarg_pmd_t *p, uint32_t npmds,
		     uint64_t smpl_gpa, uint32_t smpl_pages)
{
	uint64_t gpa[HL_SMPL_PAGES_MAX];
	uint32_t id = 0, i;
	int ret;

	if (smpl_pages > HL_SMPL_PAGES_MAX) {
		hl_note("%s: %u sampling buffer pages, at most %u", who,
			smpl_pages, HL_SMPL_PAGES_MAX);
		return 0;
	}
	for (i = 0; i < smpl_pages; i++)
		gpa[i] = smpl_gpa + i * HL_PAGE;
	if (smpl_pages)
		ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE,
				     smpl_pages * HL_PAGE, &id);
	else
		ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	if (!ret && smpl_pages)
		ret = cb_smpl_register(&v->cb, id, 0, smpl_pages, gpa);
	ret = ret ? ret : cb_create_sets(&v->cb, id, d, nsets);
	ret = ret ? ret : cb_write_pmds(&v->cb, id, p, npmds);
	ret = ret ? ret : cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	if (ret) {
		hl_note("%s: %s (err_index %u)", who, hl_status_str(ret),
			v->cb.hdr.err_index);
		return 0;
	}
	return id;
}

/* ---- the guest running ------------------------------------------------------ */

int hl_vcpu_setup(struct hl_vcpu *v, uint64_t rip, uint64_t rcx, uint64_t rdx)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs))
		return -errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = sregs.es.base = sregs.ss.base = 0;
	sregs.ds.selector = sregs.es.selector = sregs.ss.selector = 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs))
		return -errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = rip;
	regs.rflags = 0x2;
	regs.rcx = rcx;
	regs.rdx = rdx;
	regs.rsp = 0x8000;
	if (ioctl(v->fd, KVM_SET_REGS, &regs))
		return -errno;
	return 0;
}

static void exits_clear(struct hl_vcpu *v)
{
	v->exits_io = v->exits_hlt = v->exits_intr = v->exits_other = 0;
}

int hl_run_to_done(struct hl_vcpu *v)
{
	struct kvm_run *run = v->run;

	exits_clear(v);
	for (;;) {
		run->immediate_exit = 0;
		if (ioctl(v->fd, KVM_RUN, 0)) {
			if (errno == EINTR) {
				v->exits_intr++;
				continue;
			}
			return -errno;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.port == HL_PORT_DONE)
				return 0;
			v->exits_io++;
			break;
		case KVM_EXIT_HLT:
			v->exits_hlt++;
			break;
		case KVM_EXIT_INTR:
			v->exits_intr++;
			break;
		default:
			v->exits_other++;
			fprintf(stderr, "hostlib: vCPU %d: exit reason %u\n",
				v->index, run->exit_reason);
			return -EIO;
		}
	}
}

int hl_run_io(struct hl_vcpu *v, unsigned int n)
{
	int ret;

	if (n < 1 || n > 65535)
		return -EINVAL;
	ret = hl_vcpu_setup(v, HL_CODE_IO, n, 0);
	return ret ? ret : hl_run_to_done(v);
}

int hl_run_until_kicked(struct hl_vcpu *v)
{
	struct kvm_run *run = v->run;

	exits_clear(v);
	while (!v->stop) {
		run->immediate_exit = 0;
		if (v->stop)
			break;
		if (ioctl(v->fd, KVM_RUN, 0)) {
			if (errno == EINTR) {
				v->exits_intr++;
				continue;
			}
			return -errno;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.port == HL_PORT_DONE) {
				v->stop = 0;
				return 1;
			}
			v->exits_io++;
			break;
		case KVM_EXIT_HLT:
			v->exits_hlt++;
			break;
		case KVM_EXIT_INTR:
			v->exits_intr++;
			break;
		default:
			v->exits_other++;
			return -EIO;
		}
	}
	v->stop = 0;
	run->immediate_exit = 0;
	return 0;
}

static int io_to_done_fn(struct hl_vcpu *v, void *p)
{
	int ret = hl_vcpu_setup(v, HL_CODE_IO, *(unsigned int *)p, 0);

	return ret ? ret : hl_run_until_kicked(v);
}

uint64_t hl_run_io_timed(struct hl_vcpu *v, unsigned int n, uint64_t limit_ns,
			 int *done)
{
	const struct timespec tick = { 0, 5000000 };
	uint64_t t0 = hl_mono_ns(), t;
	bool finished = false;
	int ret;

	hl_call_async(v, io_to_done_fn, &n);
	while (hl_mono_ns() - t0 < limit_ns) {
		pthread_mutex_lock(&v->mu);
		finished = v->state != 1;
		pthread_mutex_unlock(&v->mu);
		if (finished)
			break;
		nanosleep(&tick, NULL);
	}
	t = hl_mono_ns() - t0;
	ret = finished ? hl_call_wait(v) : hl_kick_and_wait(v);
	*done = ret == 1;
	return t;
}

struct busy_req {
	uint32_t ctx;
	uint64_t ns, cpu_ns, busy_ns;
};

static int busy_fn(struct hl_vcpu *v, void *p)
{
	struct busy_req *r = p;
	struct hl_thread_span span;
	uint64_t t1, t2;
	int ret, ret2;

	hl_thread_span_start(&span);
	ret = cb_start(&v->cb, r->ctx);
	t1 = hl_thread_ns();
	hl_busy_ns(r->ns);
	t2 = hl_thread_ns();
	ret2 = cb_stop(&v->cb, r->ctx);
	r->cpu_ns = hl_thread_span_end(&span);
	r->busy_ns = t2 - t1;
	return ret ? ret : ret2;
}

int hl_start_busy_stop(struct hl_vcpu *v, uint32_t ctx, uint64_t ns,
		       uint64_t *cpu_ns, uint64_t *busy_ns)
{
	struct busy_req r = { .ctx = ctx, .ns = ns };
	int ret = hl_call(v, busy_fn, &r);

	if (cpu_ns)
		*cpu_ns = r.cpu_ns;
	if (busy_ns)
		*busy_ns = r.busy_ns;
	return ret;
}

bool hl_bracket(uint64_t val, uint64_t lower, uint64_t upper)
{
	double lo = (double)lower * (1 - HL_BRACKET_REL) - (double)HL_BRACKET_ABS;
	double hi = (double)upper * (1 + HL_BRACKET_REL) + (double)HL_BRACKET_ABS;

	return (double)val >= lo && (double)val <= hi;
}

bool hl_within(uint64_t got, uint64_t want, double rel, uint64_t abs)
{
	uint64_t diff = got > want ? got - want : want - got;

	return (double)diff <= rel * (double)want + (double)abs;
}

/* ---- eventfd, time ----------------------------------------------------------- */

uint64_t hl_eventfd_read(struct hl_vcpu *v)
{
	uint64_t n = 0;

	if (read(v->efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t hl_thread_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static uint64_t task_clock_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

void hl_thread_span_start(struct hl_thread_span *t)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	t->fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	t->task0 = task_clock_read(t->fd);
	t->cpu0 = hl_thread_ns();
}

uint64_t hl_thread_span_end(struct hl_thread_span *t)
{
	uint64_t cpu = hl_thread_ns() - t->cpu0;
	uint64_t task = task_clock_read(t->fd) - t->task0;

	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	return task > cpu ? task : cpu;
}

uint64_t hl_thread_csw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

uint64_t hl_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void hl_busy_ns(uint64_t ns)
{
	uint64_t end = hl_thread_ns() + ns;
	volatile uint64_t x = 0;
	int i;

	while (hl_thread_ns() < end)
		for (i = 0; i < 1000; i++)
			x += i;
}

static int schedstat(pid_t tid, unsigned long long *run,
		     unsigned long long *delay)
{
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu", run, delay);
	fclose(f);
	return n == 2 ? 0 : -EIO;
}

int hl_thread_cpu_of(pid_t tid, uint64_t *ns)
{
	unsigned long long run, delay;
	int ret = schedstat(tid, &run, &delay);

	*ns = ret ? 0 : run;
	return ret;
}

int hl_run_delay_ns(pid_t tid, uint64_t *ns)
{
	unsigned long long run, delay;
	int ret = schedstat(tid, &run, &delay);

	*ns = ret ? 0 : delay;
	return ret;
}

int hl_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* ---- module stats -------------------------------------------------------------- */

int hl_module_stats(struct kvmpfm_module_stats *st)
{
	int fd = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, KVMPFM_GET_MODULE_STATS, st) ? -errno : 0;
	close(fd);
	return ret;
}

int hl_vm_stats(struct hl_vm *vm, struct kvmpfm_vm_stats *st)
{
	return ioctl(vm->pfm_fd, KVMPFM_GET_VM_STATS, st) ? -errno : 0;
}

/*
 * Reading the stats takes an open /dev/kvm-perfmon, and the module counts
 * that open file's own state in `allocations` (kvmpfm_open() allocates
 * through kvmpfm_zalloc()). Measure what one open file costs (0 if the
 * module stops counting it) with a second open, and expect exactly the
 * reader's own share: a leak of one object is still seen.
 */
static int own_file_allocs = -1;

static int stats_baseline(int fd)
{
	struct kvmpfm_module_stats a, b;
	int fd2;

	if (own_file_allocs >= 0)
		return 0;
	if (ioctl(fd, KVMPFM_GET_MODULE_STATS, &a))
		return -errno;
	fd2 = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd2 < 0)
		return -errno;
	if (ioctl(fd, KVMPFM_GET_MODULE_STATS, &b)) {
		close(fd2);
		return -errno;
	}
	close(fd2);
	own_file_allocs = (int)(b.allocations - a.allocations);
	if (own_file_allocs < 0 || own_file_allocs > 1)
		own_file_allocs = 0;	/* a concurrent change: assume none */
	if (own_file_allocs)
		hl_note("note: the module counts each open %s in allocations "
			"(%d each); the reader's own file is discounted",
			KVMPFM_DEVICE, own_file_allocs);
	return 0;
}

bool hl_module_idle(int wait_ms, char *why, size_t why_len)
{
	struct kvmpfm_module_stats st;
	struct timespec ts = { 0, 10000000 };
	int fd, waited = 0;
	bool idle = false;

	fd = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "open %s: %s", KVMPFM_DEVICE,
			 hl_errname(errno));
		return false;
	}
	if (stats_baseline(fd)) {
		snprintf(why, why_len, "GET_MODULE_STATS: %s", hl_errname(errno));
		close(fd);
		return false;
	}
	for (;;) {
		if (ioctl(fd, KVMPFM_GET_MODULE_STATS, &st)) {
			snprintf(why, why_len, "GET_MODULE_STATS: %s",
				 hl_errname(errno));
			break;
		}
		idle = st.allocations == own_file_allocs && !st.perf_events &&
		       !st.pinned_pages && !st.vms;
		if (idle || waited >= wait_ms) {
			snprintf(why, why_len,
				 "allocations=%" PRId64 " (own file %d) perf_events=%"
				 PRId64 " pinned_pages=%" PRId64 " vms=%" PRId64,
				 (int64_t)st.allocations, own_file_allocs,
				 (int64_t)st.perf_events,
				 (int64_t)st.pinned_pages, (int64_t)st.vms);
			break;
		}
		nanosleep(&ts, NULL);
		waited += 10;
	}
	close(fd);
	return idle;
}

/* ---- BIND_VM's limits ------------------------------------------------------ */

int hl_allow_host_page_faults(bool on)
{
	FILE *f = fopen("/sys/module/kvm_perfmon/parameters/"
			"allow_host_page_faults", "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(on ? "Y\n" : "N\n", f) == EOF)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

const char *const hl_lim_name[HL_LIM_N] = {
	"max_contexts", "max_sets", "max_vector", "max_smpl_buf",
};

uint64_t hl_ceiling(int l)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/module/kvm_perfmon/parameters/%s_ceiling", hl_lim_name[l]);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

void hl_lim_set(struct kvmpfm_bind_vm *b, int l, uint64_t v)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		b->max_contexts = v;
		break;
	case HL_LIM_SETS:
		b->max_sets = v;
		break;
	case HL_LIM_VECTOR:
		b->max_vector = v;
		break;
	default:
		b->max_smpl_buf = v;
	}
}

uint64_t hl_lim_of_bind(const struct kvmpfm_bind_vm *b, int l)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		return b->max_contexts;
	case HL_LIM_SETS:
		return b->max_sets;
	case HL_LIM_VECTOR:
		return b->max_vector;
	default:
		return b->max_smpl_buf;
	}
}

uint64_t hl_lim_of_info(const struct pvpfm_pmu_info *i, int l)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		return i->max_contexts;
	case HL_LIM_SETS:
		return i->max_sets;
	case HL_LIM_VECTOR:
		return i->max_vector;
	default:
		return i->max_smpl_buf;
	}
}

bool hl_check_module_idle(const char *name)
{
	char why[256];
	bool ok = hl_module_idle(2000, why, sizeof(why));

	return hl_check(ok, name, "module stats not zero after teardown: %s", why);
}

/* ---- L1's kernel log ------------------------------------------------------- */

int hl_klog_start(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

#define KLOG_MAX_RE	64

/* the rig's bad-patterns and HL_KLOG_EXTRA, compiled; how many, or -errno */
static int klog_patterns(regex_t *re)
{
	char line[512];
	int n = 0;
	size_t len;
	FILE *f = fopen(HL_BAD_PATTERNS, "r");

	if (!f)
		return -errno;
	while (n < KLOG_MAX_RE - 1 && fgets(line, sizeof(line), f)) {
		len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		if (regcomp(&re[n], line, REG_EXTENDED | REG_NOSUB)) {
			fprintf(stderr, "hostlib: bad pattern in %s: %s\n",
				HL_BAD_PATTERNS, line);
			continue;
		}
		n++;
	}
	fclose(f);
	if (!n)
		return -ENOENT;
	if (!regcomp(&re[n], HL_KLOG_EXTRA, REG_EXTENDED | REG_NOSUB))
		n++;
	return n;
}

int hl_klog_concerns(int fd, int show, const char *prefix)
{
	regex_t re[KLOG_MAX_RE];
	char rec[8192], *msg, *end;
	int nre, i, found = 0;
	ssize_t len;

	if (fd < 0)
		return fd;
	nre = klog_patterns(re);
	if (nre < 0)
		return nre;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		rec[len] = 0;
		/* "prio,seq,usec,flags;message\n" and " KEY=value" lines */
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = 0;
		for (i = 0; i < nre; i++)
			if (!regexec(&re[i], msg, 0, NULL, 0))
				break;
		if (i == nre)
			continue;
		if (found++ < show)
			printf("%s%s\n", prefix, msg);
	}
	for (i = 0; i < nre; i++)
		regfree(&re[i]);
	return found;
}
