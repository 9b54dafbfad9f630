// SPDX-License-Identifier: GPL-2.0
/*
 * t_hang: a VMM's call parked in a copy from or to its own memory holds
 * nothing anyone else waits on (kvm/kvmpfm.h, "Locking").
 *
 * A userfaultfd page that is never served stands for any page whose
 * fault does not end (a stalled FUSE file, a VMM that registered its own
 * memory): a call of VM a passes an address in such a page, its copy
 * faults and blocks. Meanwhile, each in its own thread, the operator's
 * snapshot of VM a and of VM b, LIST_VMS, the operator's filter on VM a,
 * VM a's own GET_VM_STATS and the BIND_VM of a third VM must all finish
 * within a second. Then the fault is served and the parked call returns.
 * The calls parked: SET_IDENTITY, SET_EVENT_MAP (its entries), SET_STATE
 * and GET_STATE (the stream's buffer), and DOORBELL (the command block in
 * guest memory, its pages dropped and registered).
 *
 * Were a parked call to hold VM a's lock, the snapshot of VM a would wait
 * for it, and with the list's lock held (as it did) every other probe
 * would wait behind: each probe is judged on its own.
 *
 * Last, a sample the engine writes into guest memory, which it does with
 * VM a's lock held (kvm/kvmpfm.h), parks VM a's vCPU thread: a snapshot of
 * VM a waits then, but a SIGKILL ends that wait, and nothing else waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>

#include "hostlib.h"

#define SNAP_ROOM	(256 * 1024)
#define PROBE_LIMIT_NS	1000000000ULL
#define PARK_WAIT_MS	5000
#define SERVE_LIMIT_NS	(30 * 1000000000ULL)

static struct hl_vm vm_a, vm_b;
static uint64_t id_a, id_b;
static int op_fd = -1;
static int uffd = -1;

/* ---- userfaultfd ---------------------------------------------------------- */

static int uffd_open(const char **how)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd, dev;

	*how = "userfaultfd(2)";
	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*how = "/dev/userfaultfd";
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			return -errno;
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		close(dev);
		if (fd < 0)
			return -errno;
	}
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* faults on [@addr, +@len) now wait for uffd; the pages must be missing */
static int uffd_register(void *addr, size_t len)
{
	struct uffdio_register r = {
		.range = { .start = (uintptr_t)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	return HL_IOCTL(uffd, UFFDIO_REGISTER, &r);
}

/* faults on [@addr, +@len) are ordinary again */
static void uffd_unregister(void *addr, size_t len)
{
	struct uffdio_range r = { .start = (uintptr_t)addr, .len = len };

	ioctl(uffd, UFFDIO_UNREGISTER, &r);
}

/* the next fault's address, or 0 if none came within @ms */
static uint64_t uffd_wait_fault(int ms)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, ms) != 1)
		return 0;
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return 0;
	return msg.arg.pagefault.address;
}

/* a zeroed page at the fault's address: the faulting copy goes on */
static void uffd_serve(uint64_t addr)
{
	static char zero[HL_PAGE] __attribute__((aligned(4096)));
	struct uffdio_copy c = {
		.dst = addr & ~(HL_PAGE - 1), .src = (uintptr_t)zero,
		.len = HL_PAGE,
	};

	ioctl(uffd, UFFDIO_COPY, &c);
}

/* ---- the parked call ------------------------------------------------------ */

struct park {
	const char *name;
	int fd;
	unsigned long req;
	void *arg;
	struct hl_vcpu *vcpu;		/* DOORBELL: from this vCPU's thread */
	pthread_t thread;
	volatile int done;
	int ret;
};

static void *park_thread(void *p)
{
	struct park *k = p;

	k->ret = HL_IOCTL(k->fd, k->req, k->arg);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int park_doorbell(struct hl_vcpu *v, void *p)
{
	struct park *k = p;

	k->ret = HL_IOCTL(k->fd, KVMPFM_DOORBELL, (unsigned long)v->index);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	return 0;
}

static void park_start(struct park *k)
{
	if (k->vcpu)
		hl_call_async(k->vcpu, park_doorbell, k);
	else
		pthread_create(&k->thread, NULL, park_thread, k);
}

static void park_join(struct park *k)
{
	if (k->vcpu)
		hl_call_wait(k->vcpu);
	else
		pthread_join(k->thread, NULL);
}

/* ---- the probes: what must not wait for the parked call ------------------- */

struct probe {
	const char *what;
	int (*fn)(struct probe *p);
	struct hl_vm vm;		/* probe_bind's */
	pthread_t thread;
	volatile int done;
	int ret;
	uint64_t t0, ns;
};

static int snapshot_of(uint64_t id)
{
	static __thread char *buf;
	struct kvmpfm_snapshot req = { .vm_id = id, .size = SNAP_ROOM };

	if (!buf)
		buf = aligned_alloc(8, SNAP_ROOM);
	if (!buf)
		return -ENOMEM;
	req.buf = (uintptr_t)buf;
	return HL_IOCTL(op_fd, KVMPFM_GET_SNAPSHOT, &req);
}

static int probe_snapshot_a(struct probe *p)
{
	(void)p;
	return snapshot_of(id_a);
}

static int probe_snapshot_b(struct probe *p)
{
	(void)p;
	return snapshot_of(id_b);
}

static int probe_list(struct probe *p)
{
	struct kvmpfm_vm_list l = { .nr = 0 };

	(void)p;
	return HL_IOCTL(op_fd, KVMPFM_LIST_VMS, &l);
}

static int probe_filter_a(struct probe *p)
{
	struct kvmpfm_event_filter f = {
		.action = KVMPFM_FILTER_DENY, .vm_id = id_a,
	};

	(void)p;
	return HL_IOCTL(op_fd, KVMPFM_SET_EVENT_FILTER, &f);
}

static int probe_stats_a(struct probe *p)
{
	struct kvmpfm_vm_stats st;

	(void)p;
	return HL_IOCTL(vm_a.pfm_fd, KVMPFM_GET_VM_STATS, &st);
}

/* the VM is made before the probes start: only BIND_VM is timed */
static int probe_bind(struct probe *p)
{
	return hl_vm_bind(&p->vm);
}

static void *probe_thread(void *arg)
{
	struct probe *p = arg;

	p->t0 = hl_mono_ns();
	p->ret = p->fn(p);
	p->ns = hl_mono_ns() - p->t0;
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool all_done(struct probe *p, int n, struct park *k)
{
	int i;

	for (i = 0; i < n; i++)
		if (!__atomic_load_n(&p[i].done, __ATOMIC_ACQUIRE))
			return false;
	return !k || __atomic_load_n(&k->done, __ATOMIC_ACQUIRE);
}

/* the VM the bind_other_vm probe binds: one vCPU, not bound yet */
static int bind_vm_create(struct hl_vm *vm)
{
	struct hl_vm_opts o = hl_vm_opts_simple(1);

	o.no_pfm = true;
	return hl_vm_create(vm, &o);
}

/* probes [@from, @n) started, each on a thread of its own */
static void probes_start(struct probe *probes, int from, int n)
{
	int i;

	for (i = from; i < n; i++)
		pthread_create(&probes[i].thread, NULL, probe_thread,
			       &probes[i]);
}

/*
 * Up to PROBE_LIMIT_NS for all @n @probes to end, then each checked as
 * "@prefix_WHAT": ended within the limit, successfully; @note: and its
 * time printed
 */
static void probes_judge(struct probe *probes, int n, const char *prefix,
			 bool note)
{
	uint64_t t0 = hl_mono_ns();
	char name[96];
	int i;

	while (!all_done(probes, n, NULL) &&
	       hl_mono_ns() - t0 < PROBE_LIMIT_NS)
		usleep(2000);
	for (i = 0; i < n; i++) {
		bool done = __atomic_load_n(&probes[i].done, __ATOMIC_ACQUIRE);

		snprintf(name, sizeof(name), "%s_%s", prefix, probes[i].what);
		t_check(done && probes[i].ns < PROBE_LIMIT_NS &&
			!probes[i].ret, name, "%s",
			!done ? "still waiting after 1 s" :
			probes[i].ret ? hl_status_str(probes[i].ret) :
			"took longer than 1 s");
		if (done && note)
			t_note("%s: %.2f ms", name, probes[i].ns / 1e6);
	}
}

/*
 * Park @k on @uffd, run the probes, judge them, serve the fault(s) until
 * the parked call and the probes are done.
 */
static void run_case(struct park *k)
{
	struct probe probes[] = {
		{ .what = "snapshot_same_vm", .fn = probe_snapshot_a },
		{ .what = "snapshot_other_vm", .fn = probe_snapshot_b },
		{ .what = "list_vms", .fn = probe_list },
		{ .what = "operator_filter", .fn = probe_filter_a },
		{ .what = "own_stats", .fn = probe_stats_a },
		{ .what = "bind_other_vm", .fn = probe_bind },
	};
	const int n = sizeof(probes) / sizeof(probes[0]);
	struct probe *bind = &probes[n - 1];
	char name[96];
	uint64_t addr, t0;
	int i, ret;

	ret = bind_vm_create(&bind->vm);
	if (!t_check(!ret, k->name, "third VM: %s", hl_status_str(ret)))
		return;
	park_start(k);
	addr = uffd_wait_fault(PARK_WAIT_MS);
	snprintf(name, sizeof(name), "%s_parked", k->name);
	if (!t_check(addr && !k->done, name, "no fault within %d ms (%s)",
		     PARK_WAIT_MS, k->done ? hl_status_str(k->ret) :
		     "still running")) {
		if (addr)
			uffd_serve(addr);
		park_join(k);
		hl_vm_destroy(&bind->vm);
		return;
	}
	/*
	 * the snapshot of VM a first, so that a lock it takes beyond VM a's
	 * (the list of VMs) is held while the others run
	 */
	probes_start(probes, 0, 1);
	usleep(50000);
	probes_start(probes, 1, n);
	probes_judge(probes, n, k->name, true);
	snprintf(name, sizeof(name), "%s_still_parked", k->name);
	t_check(!k->done, name, "the parked call returned %s before its "
		"fault was served", hl_status_str(k->ret));
	/* serve until the parked call and every probe are done */
	uffd_serve(addr);
	t0 = hl_mono_ns();
	while (!all_done(probes, n, k) && hl_mono_ns() - t0 < SERVE_LIMIT_NS) {
		addr = uffd_wait_fault(10);
		if (addr)
			uffd_serve(addr);
	}
	if (!all_done(probes, n, k)) {
		t_check(false, k->name, "still waiting 30 s after the fault "
			"was served: giving up");
		exit(t_done());
	}
	park_join(k);
	for (i = 0; i < n; i++)
		pthread_join(probes[i].thread, NULL);
	t_note("%s: the parked call returned %s once served", k->name,
	       hl_status_str(k->ret));
	hl_vm_destroy(&bind->vm);
}

/* @pages fresh pages registered with uffd: no fault in them is served */
static void *trap_pages(int pages)
{
	void *p = mmap(NULL, pages * HL_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (uffd_register(p, pages * HL_PAGE)) {
		munmap(p, pages * HL_PAGE);
		return NULL;
	}
	return p;
}

static void case_identity(void)
{
	struct park k = { .name = "identity", .fd = vm_a.pfm_fd,
			  .req = KVMPFM_SET_IDENTITY };

	k.arg = trap_pages(1);
	if (t_check(k.arg, "identity_trap", "mmap/register failed"))
		run_case(&k);
}

/* the header on an ordinary page, its entries on the trapped one after */
static void case_event_map(void)
{
	struct park k = { .name = "event_map", .fd = vm_a.pfm_fd,
			  .req = KVMPFM_SET_EVENT_MAP };
	struct kvmpfm_event_map *map;
	char *p = mmap(NULL, 2 * HL_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!t_check(p != MAP_FAILED && !uffd_register(p + HL_PAGE, HL_PAGE),
		     "event_map_trap", "mmap/register failed"))
		return;
	map = (void *)(p + HL_PAGE - sizeof(*map));
	map->nr = 1;
	k.arg = map;
	run_case(&k);
}

static void case_state(unsigned long req, const char *name)
{
	static struct kvmpfm_state st;
	struct park k = { .name = name, .fd = vm_a.pfm_fd, .req = req,
			  .arg = &st };
	void *buf = trap_pages(1);

	if (!t_check(buf, "state_trap", "mmap/register failed"))
		return;
	memset(&st, 0, sizeof(st));
	st.buf = (uintptr_t)buf;
	st.size = req == KVMPFM_SET_STATE ? 64 : HL_PAGE;
	run_case(&k);
}

/* VM a's vCPU 0 command block: its pages dropped and trapped */
static void case_doorbell(void)
{
	struct hl_vcpu *v = &vm_a.vcpus[0];
	struct park k = { .name = "doorbell", .fd = vm_a.pfm_fd, .vcpu = v };
	void *block = hl_hva(&vm_a, v->cmd_gpa);

	if (!t_check(!madvise(block, PVPFM_CMD_BLOCK_SIZE, MADV_DONTNEED) &&
		     !uffd_register(block, PVPFM_CMD_BLOCK_SIZE),
		     "doorbell_trap", "madvise/register: %s",
		     hl_errname(errno)))
		return;
	run_case(&k);
	/* the block's pages not faulted in yet are VM a's again */
	uffd_unregister(block, PVPFM_CMD_BLOCK_SIZE);
}

/* ---- a sample written into guest memory, with VM a's lock held ------------ */

#define SMPL_PAGES	2

struct sampler {
	uint32_t ctx;
	volatile int done;
	int ret;
};

/* on the vCPU thread: START, burn CPU (overflows: samples), STOP */
static int sampler_fn(struct hl_vcpu *v, void *p)
{
	struct sampler *m = p;
	int ret = cb_start(&v->cb, m->ctx);

	if (!ret)
		hl_busy_ns(100000000ULL);
	ret = ret ?: cb_stop(&v->cb, m->ctx);
	m->ret = ret;
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return ret;
}

/* a child's snapshot of VM a; its status, or -1 while it runs */
static int child_wait(pid_t pid, uint64_t limit_ns)
{
	uint64_t t0 = hl_mono_ns();
	int st;

	do {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(2000);
	} while (hl_mono_ns() - t0 < limit_ns);
	return -1;
}

/*
 * What the engine writes into guest memory (a sample) it writes with the
 * VM's lock held: the VM's own vCPU thread is parked there, in its task
 * work, on the buffer's first page. The operator's snapshot of that VM
 * waits for the lock, but killably (a child's, SIGKILLed, is gone within
 * a second); LIST_VMS, a snapshot of VM b and another VM's bind do not
 * wait at all.
 */
static void case_sample_write(void)
{
	struct probe probes[] = {
		{ .what = "snapshot_other_vm", .fn = probe_snapshot_b },
		{ .what = "list_vms", .fn = probe_list },
		{ .what = "bind_other_vm", .fn = probe_bind },
	};
	const int n = sizeof(probes) / sizeof(probes[0]);
	struct probe *bind = &probes[n - 1];
	struct hl_vcpu *v = &vm_a.vcpus[0];
	struct sampler m = { 0 };
	uint64_t gpa[SMPL_PAGES], addr, t0;
	pfarg_pmd_t p;
	pid_t child;
	int i, ret, st;

	gpa[0] = hl_gpa_alloc(&vm_a, SMPL_PAGES * HL_PAGE);
	for (i = 1; i < SMPL_PAGES; i++)
		gpa[i] = gpa[0] + i * HL_PAGE;
	cb_pmd_init(&p, RUN_NS, 0, -100000LL);
	p.reg_short_reset = -100000LL;
	p.reg_long_reset = -100000LL;
	ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, SMPL_PAGES * HL_PAGE,
			     &m.ctx);
	ret = ret ?: cb_smpl_register(&v->cb, m.ctx, 0, SMPL_PAGES, gpa);
	ret = ret ?: cb_write_pmds(&v->cb, m.ctx, &p, 1);
	ret = ret ?: cb_load(&v->cb, m.ctx, v->index, 0, 0, v->guest_tgid);
	ret = ret ?: bind_vm_create(&bind->vm);
	if (!t_check(!ret, "sample_write_setup", "%s", hl_status_str(ret)))
		return;
	if (!t_check(!madvise(hl_hva(&vm_a, gpa[0]), SMPL_PAGES * HL_PAGE,
			       MADV_DONTNEED) &&
		     !uffd_register(hl_hva(&vm_a, gpa[0]),
				     SMPL_PAGES * HL_PAGE),
		     "sample_write_trap", "madvise/register: %s",
		     hl_errname(errno)))
		goto out;
	hl_call_async(v, sampler_fn, &m);
	addr = uffd_wait_fault(PARK_WAIT_MS);
	if (!t_check(addr && !m.done, "sample_write_parked",
		     "no fault within %d ms (%s)", PARK_WAIT_MS,
		     m.done ? hl_status_str(m.ret) : "still running")) {
		if (addr)
			uffd_serve(addr);
		hl_call_wait(v);
		goto out;
	}
	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(snapshot_of(id_a) ? 1 : 0);
	probes_start(probes, 0, n);
	/* the child waits for VM a's lock: it must still be waiting */
	st = child_wait(child, 200000000ULL);
	t_check(st == -1, "sample_write_snapshot_waits",
		"the child's snapshot returned (status %#x) while VM a's "
		"lock was held", st);
	kill(child, SIGKILL);
	t0 = hl_mono_ns();
	st = child_wait(child, PROBE_LIMIT_NS);
	t_check(st != -1 && WIFSIGNALED(st), "sample_write_snapshot_killable",
		"%s", st == -1 ? "SIGKILLed, still there after 1 s" :
		"ended by other than the signal");
	if (st != -1)
		t_note("sample_write: the waiting snapshot killed in %.2f ms",
		       (hl_mono_ns() - t0) / 1e6);
	probes_judge(probes, n, "sample_write", false);
	uffd_serve(addr);
	t0 = hl_mono_ns();
	while ((!all_done(probes, n, NULL) || !m.done) &&
	       hl_mono_ns() - t0 < SERVE_LIMIT_NS) {
		addr = uffd_wait_fault(10);
		if (addr)
			uffd_serve(addr);
	}
	if (!all_done(probes, n, NULL) || !m.done) {
		t_check(false, "sample_write", "still waiting 30 s after the "
			"fault was served: giving up");
		exit(t_done());
	}
	if (st == -1)
		waitpid(child, &st, 0);
	hl_call_wait(v);
	for (i = 0; i < n; i++)
		pthread_join(probes[i].thread, NULL);
	HL_EXPECT("sample_write_sampler_done", m.ret, 0);
	uffd_unregister(hl_hva(&vm_a, gpa[0]), SMPL_PAGES * HL_PAGE);
out:
	cb_destroy(&v->cb, m.ctx);
	hl_vm_destroy(&bind->vm);
}

/* the id of the VM whose binding file is @fd: the one named @name */
static uint64_t vm_id_named(struct hl_vm *vm, const char *name)
{
	struct kvmpfm_vm_identity id = { };
	struct kvmpfm_snap_vm *s;
	struct kvmpfm_vm_list l;
	uint64_t ids[16], found = 0;
	uint32_t i;
	char *buf = aligned_alloc(8, SNAP_ROOM);

	snprintf(id.name, sizeof(id.name), "%s", name);
	if (!buf || HL_IOCTL(vm->pfm_fd, KVMPFM_SET_IDENTITY, &id)) {
		free(buf);
		return 0;
	}
	l = (struct kvmpfm_vm_list){ .nr = 16, .ids = (uintptr_t)ids };
	if (HL_IOCTL(op_fd, KVMPFM_LIST_VMS, &l))
		l.nr = 0;
	s = (void *)buf;
	for (i = 0; i < l.nr && i < 16 && !found; i++) {
		struct kvmpfm_snapshot req = {
			.vm_id = ids[i], .buf = (uintptr_t)buf,
			.size = SNAP_ROOM,
		};

		if (!HL_IOCTL(op_fd, KVMPFM_GET_SNAPSHOT, &req) &&
		    !strcmp(s->identity.name, name))
			found = ids[i];
	}
	free(buf);
	return found;
}

static void note_uffd_policy(void)
{
	char line[32] = "?";
	FILE *f = fopen("/proc/sys/vm/unprivileged_userfaultfd", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			snprintf(line, sizeof(line), "?");
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
	t_note("vm.unprivileged_userfaultfd=%s, /dev/userfaultfd %s, uid %d",
	       line, access("/dev/userfaultfd", F_OK) ? "absent" : "present",
	       (int)getuid());
}

int main(void)
{
	const char *how;
	int ret;

	hl_init();
	note_uffd_policy();
	uffd = uffd_open(&how);
	if (!t_check(uffd >= 0, "userfaultfd", "%s: %s", how,
		     hl_errname(uffd)))
		return t_done();
	t_note("userfaultfd through %s", how);
	op_fd = open(KVMPFM_DEVICE, O_RDWR | O_CLOEXEC);
	ret = op_fd < 0 ? -errno : hl_vm_simple(&vm_a, 1);
	ret = ret ?: hl_vm_simple(&vm_b, 1);
	if (!t_check(!ret, "hang_vms", "VMs: %s", hl_errname(ret)))
		return t_done();
	id_a = vm_id_named(&vm_a, "hang-a");
	id_b = vm_id_named(&vm_b, "hang-b");
	if (!t_check(id_a && id_b, "hang_ids", "ids %" PRIu64 ", %" PRIu64,
		     id_a, id_b))
		return t_done();

	case_identity();
	case_event_map();
	case_state(KVMPFM_SET_STATE, "set_state");
	case_state(KVMPFM_GET_STATE, "get_state");
	case_doorbell();
	case_sample_write();

	hl_vm_destroy(&vm_b);
	hl_vm_destroy(&vm_a);
	close(op_fd);
	close(uffd);
	hl_check_module_idle("hang_module_idle");
	return t_done();
}
