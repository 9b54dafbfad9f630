// SPDX-License-Identifier: GPL-2.0
/*
 * t_teardown: every way a bound VM can go away, with contexts loaded,
 * counting, sampling into guest buffers (pages pinned) and switching sets
 * on timers, while the vCPU threads ring DOORBELL and run the guest.
 * After each, the module holds nothing (KVMPFM_GET_MODULE_STATS:
 * allocations, perf_events, pinned_pages, vms back to zero), and the rig
 * checks L1's log for WARN/BUG/oops afterwards.
 *
 *   close_pfm_fd        close /dev/kvm-perfmon from the main thread while
 *                       the vCPU threads work (their next DOORBELL: EBADF)
 *   kill_child          SIGKILL a child process holding a busy bound VM
 *   child_exit          a child exits without closing anything
 *   close_vm_fd_first   close the KVM VM fd first: DOORBELL still works
 *                       (the module holds the VM); then the perfmon fd
 *   vm_gone_first       close every KVM fd and unmap guest RAM first:
 *                       DOORBELL fails cleanly (EFAULT); then the perfmon fd
 *   vcpu_threads_exit   the vCPU threads exit while their contexts count
 *                       and switch sets; the host keeps switching; close
 *   destroy_everything  UNLOAD/DESTROY of running, masked, sampling
 *                       contexts by command: no perf event or pin left
 *   rebind              the same VM bound again after a teardown
 *   one_binding         a second perfmon file whose vCPU thread enters the
 *                       same VM: its DOORBELL EBUSY
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "hostlib.h"

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

struct busy_vm {
	struct hl_vm vm;
	uint32_t ctx[HL_MAX_VCPUS], spare[HL_MAX_VCPUS];
	volatile int stop;
	int loops_err[HL_MAX_VCPUS];
	uint64_t loops[HL_MAX_VCPUS];
};

/*
 * On vCPU @v: a system-wide context sampling VCPU_RUN_NS every 200 us
 * into a 2-page buffer (recording VM_EXITS), two sets switching every
 * 1 ms, started; and a spare unloaded context with a registered buffer.
 * The sampling PMD asks for a notification, so that a full buffer is
 * notified and work_fn restarts it (without one the context would
 * saturate: masked for good, RESTART refused).
 */
static int busy_ctx(struct busy_vm *b, struct hl_vcpu *v)
{
	pfarg_setdesc_t d[2];
	pfarg_pmd_t p[4];
	uint64_t g[2];
	uint32_t id = 0, spare = 0;
	int ret, i;

	ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, 2 * HL_PAGE, &id);
	for (i = 0; i < 2; i++)
		g[i] = hl_gpa_alloc(&b->vm, HL_PAGE);
	ret = ret ? ret : cb_smpl_register(&v->cb, id, 0, 2, g);
	memset(d, 0, sizeof(d));
	for (i = 0; i < 2; i++) {
		d[i].set_id = i;
		d[i].set_flags = PFM_SETFL_TIME_SWITCH;
		d[i].set_timeout = 1 * MS;
	}
	ret = ret ? ret : cb_create_sets(&v->cb, id, d, 2);
	cb_pmd_init(&p[0], RUN_NS, 0, -(200 * US));
	p[0].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	p[0].reg_short_reset = -(200 * US);
	p[0].reg_long_reset = -(200 * US);
	p[0].reg_smpl_pmds[VM_EXITS / 64] = 1ULL << (VM_EXITS % 64);
	cb_pmd_init(&p[1], VM_EXITS, 0, 0);
	cb_pmd_init(&p[2], RUN_NS, 1, 0);
	cb_pmd_init(&p[3], HOST_PAGE_FAULTS, 1, 0);
	ret = ret ? ret : cb_write_pmds(&v->cb, id, p, 4);
	ret = ret ? ret : cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, id);

	ret = ret ? ret : cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE,
					 HL_PAGE * 2, &spare);
	for (i = 0; i < 2; i++)
		g[i] = hl_gpa_alloc(&b->vm, HL_PAGE);
	ret = ret ? ret : cb_smpl_register(&v->cb, spare, 0, 2, g);
	b->ctx[v->index] = id;
	b->spare[v->index] = spare;
	return ret;
}

/* the vCPU's work: burn, run the guest, read, restart when masked */
static int work_fn(struct hl_vcpu *v, void *p)
{
	struct busy_vm *b = p;
	pfarg_pmd_t pmd;
	int ret = 0;

	while (!b->stop) {
		hl_busy_ns(300 * US);
		if (hl_run_io(v, 20))
			break;
		cb_pmd_init(&pmd, RUN_NS, 0, 0);
		ret = cb_read_pmds(&v->cb, b->ctx[v->index], &pmd, 1);
		if (HL_IS_IOCTL_ERR(ret))
			break;
		/* the buffer filled: empty it, go on */
		if (hl_eventfd_read(v)) {
			pfarg_msg_t m;

			while (!cb_read_msg(&v->cb, b->ctx[v->index], &m))
				;
			ret = cb_restart(&v->cb, b->ctx[v->index]);
			if (HL_IS_IOCTL_ERR(ret))
				break;
		}
		b->loops[v->index]++;
	}
	/* one more after the stop: what does a DOORBELL get now? */
	if (!HL_IS_IOCTL_ERR(ret)) {
		cb_pmd_init(&pmd, RUN_NS, 0, 0);
		ret = cb_read_pmds(&v->cb, b->ctx[v->index], &pmd, 1);
	}
	b->loops_err[v->index] = ret;
	return ret;
}

static int busy_vm_up(struct busy_vm *b, int nr, const char *name)
{
	int ret, i;

	memset(b, 0, sizeof(*b));
	ret = hl_vm_simple(&b->vm, nr);
	for (i = 0; !ret && i < nr; i++)
		ret = busy_ctx(b, &b->vm.vcpus[i]);
	if (!ret)
		for (i = 0; i < nr; i++)
			hl_call_async(&b->vm.vcpus[i], work_fn, b);
	if (ret) {
		t_check(false, name, "setting up the busy VM: %s",
			hl_status_str(ret));
		hl_vm_destroy(&b->vm);
	}
	return ret;
}

static void busy_vm_stop(struct busy_vm *b)
{
	int i;

	b->stop = 1;
	for (i = 0; i < b->vm.nr_vcpus; i++)
		hl_call_wait(&b->vm.vcpus[i]);
}

/* busy_vm_up, the vCPUs busy for @ms, busy_vm_stop: 0 or the setup's error */
static int busy_vm_run(struct busy_vm *b, int nr, unsigned int ms,
		       const char *name)
{
	int ret = busy_vm_up(b, nr, name);

	if (ret)
		return ret;
	sleep_ms(ms);
	busy_vm_stop(b);
	return 0;
}

static bool module_busy(const char *name)
{
	struct kvmpfm_module_stats st;

	hl_module_stats(&st);
	return t_check(st.vms >= 1 && st.perf_events > 0 && st.pinned_pages > 0,
		       name, "the busy VM holds vms %" PRId64 " perf_events %"
		       PRId64 " pinned_pages %" PRId64, (int64_t)st.vms,
		       (int64_t)st.perf_events, (int64_t)st.pinned_pages);
}

static void t_close_pfm_fd(void)
{
	static struct busy_vm b;
	int i, ebadf = 0;
	uint64_t loops = 0;

	if (busy_vm_up(&b, 2, "close_pfm_fd_setup"))
		return;
	sleep_ms(200);
	module_busy("close_pfm_fd_busy_before");
	hl_vm_close_pfm(&b.vm);
	hl_check_module_idle("close_pfm_fd_module_idle");
	sleep_ms(20);
	busy_vm_stop(&b);
	for (i = 0; i < b.vm.nr_vcpus; i++) {
		ebadf += b.loops_err[i] == HL_IOCTL_ERR(EBADF);
		loops += b.loops[i];
	}
	t_check(ebadf == b.vm.nr_vcpus, "close_pfm_fd_doorbells_ebadf",
		"%d of %d vCPU threads saw EBADF after the close", ebadf,
		b.vm.nr_vcpus);
	t_note("close_pfm_fd: %" PRIu64 " work loops before the close", loops);
	hl_vm_destroy(&b.vm);
	hl_check_module_idle("close_pfm_fd_vm_destroyed_idle");
}

/* a child with a busy VM; @how: 0 SIGKILL by the parent, 1 exit(0) */
static void t_vm_in_child(const char *name, int how)
{
	char n[96], c = 0;
	int pfd[2], st = 0;
	pid_t pid;

	if (pipe(pfd))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static struct busy_vm b;

		close(pfd[0]);
		t_passed = t_failed = 0;
		if (busy_vm_up(&b, 2, "child_setup"))
			_exit(3);
		sleep_ms(200);
		c = 1;
		if (write(pfd[1], &c, 1) != 1)
			_exit(4);
		if (how == 1) {
			/* no close, no stop: exit with everything running */
			_exit(0);
		}
		for (;;)
			pause();
	}
	close(pfd[1]);
	snprintf(n, sizeof(n), "%s_child_ready", name);
	if (!t_check(read(pfd[0], &c, 1) == 1 && c == 1, n,
		     "the child did not get its VM busy")) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(pfd[0]);
		return;
	}
	close(pfd[0]);
	if (how == 0) {
		snprintf(n, sizeof(n), "%s_busy_before", name);
		module_busy(n);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &st, 0);
	snprintf(n, sizeof(n), "%s_child_ended", name);
	t_check(how == 0 ? WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL :
			    WIFEXITED(st) && WEXITSTATUS(st) == 0, n,
		"wait status %#x", st);
	snprintf(n, sizeof(n), "%s_module_idle", name);
	hl_check_module_idle(n);
}

/*
 * The binding closed last, @b's VM already half gone: the module holds the
 * VM until then ("@what_module_holds_vm"), nothing after
 * ("@what_module_idle")
 */
static void binding_closed_last(struct busy_vm *b, const char *what)
{
	char n[96];

	snprintf(n, sizeof(n), "%s_module_holds_vm", what);
	module_busy(n);
	hl_vm_close_pfm(&b->vm);
	snprintf(n, sizeof(n), "%s_module_idle", what);
	hl_check_module_idle(n);
	hl_vm_destroy(&b->vm);
}

static void t_close_vm_fd_first(void)
{
	static struct busy_vm b;
	struct pvpfm_pmu_info info;
	int ret;

	if (busy_vm_up(&b, 2, "close_vm_fd_first_setup"))
		return;
	sleep_ms(100);
	close(b.vm.vm_fd);
	b.vm.vm_fd = -1;
	sleep_ms(100);
	busy_vm_stop(&b);
	ret = cb_pmu_info(&b.vm.vcpus[0].cb, &info);
	HL_EXPECT("close_vm_fd_first_doorbell_still_works", ret, 0);
	binding_closed_last(&b, "close_vm_fd_first");
}

static void t_vm_gone_first(void)
{
	static struct busy_vm b;
	struct pvpfm_pmu_info info;
	int i, ret;

	if (busy_vm_run(&b, 2, 100, "vm_gone_first_setup"))
		return;
	/* every KVM fd and the guest RAM go; the perfmon binding stays */
	for (i = 0; i < b.vm.nr_vcpus; i++) {
		munmap(b.vm.vcpus[i].run, b.vm.vcpus[i].run_size);
		b.vm.vcpus[i].run = NULL;
		close(b.vm.vcpus[i].fd);
		b.vm.vcpus[i].fd = -1;
	}
	close(b.vm.vm_fd);
	b.vm.vm_fd = -1;
	close(b.vm.kvm_fd);
	b.vm.kvm_fd = -1;
	/*
	 * The command blocks go with the RAM: hostlib writes its blocks to a
	 * scratch mapping instead, mapped before the unmap so that it cannot
	 * take the guest RAM's place (and be what the VM's memslot maps).
	 */
	{
		uint8_t *old = b.vm.mem;

		b.vm.mem = mmap(NULL, HL_MEM_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
		munmap(old, HL_MEM_SIZE);
	}
	for (i = 0; i < b.vm.nr_vcpus; i++)
		b.vm.vcpus[i].cmd = b.vm.mem + b.vm.vcpus[i].cmd_gpa;
	sleep_ms(50);
	ret = cb_pmu_info(&b.vm.vcpus[0].cb, &info);
	HL_EXPECT("vm_gone_first_doorbell_efault", ret, HL_IOCTL_ERR(EFAULT));
	binding_closed_last(&b, "vm_gone_first");
}

static void t_vcpu_threads_exit(void)
{
	static struct busy_vm b;
	struct kvmpfm_vm_stats s0, s1;
	int ret;

	if (busy_vm_run(&b, 2, 100, "vcpu_threads_exit_setup"))
		return;
	hl_vm_stop_threads(&b.vm);	/* the bound threads exit */
	hl_vm_stats(&b.vm, &s0);
	sleep_ms(200);
	ret = hl_vm_stats(&b.vm, &s1);
	t_check(!ret && s1.contexts == 4 && s1.loaded == 2,
		"vcpu_threads_exit_vm_alive",
		"status %s contexts %u loaded %u; set switches %" PRIu64
		" in 200 ms after the threads exited", hl_errname(ret),
		s1.contexts, s1.loaded,
		(uint64_t)(s1.set_switches - s0.set_switches));
	t_note("vcpu_threads_exit: %" PRIu64 " set switches after the threads "
	       "exited", (uint64_t)(s1.set_switches - s0.set_switches));
	hl_vm_close_pfm(&b.vm);
	hl_check_module_idle("vcpu_threads_exit_module_idle");
	hl_vm_destroy(&b.vm);
}

static void t_destroy_everything(void)
{
	static struct busy_vm b;
	struct kvmpfm_module_stats st;
	struct hl_vcpu *v0, *v1;
	int ret = 0, r;

	if (busy_vm_run(&b, 2, 100, "destroy_everything_setup"))
		return;
	v0 = &b.vm.vcpus[0];
	v1 = &b.vm.vcpus[1];
	/* vCPU 0's: unload while running, then destroy */
	r = cb_unload(&v0->cb, b.ctx[0]);
	ret = ret ? ret : r;
	r = cb_destroy(&v0->cb, b.ctx[0]);
	ret = ret ? ret : r;
	/* vCPU 1's: destroyed loaded and started, from vCPU 0 */
	r = cb_destroy(&v0->cb, b.ctx[1]);
	ret = ret ? ret : r;
	r = cb_destroy(&v1->cb, b.spare[0]);
	ret = ret ? ret : r;
	r = cb_destroy(&v1->cb, b.spare[1]);
	ret = ret ? ret : r;
	HL_EXPECT("destroy_everything_commands", ret, 0);
	hl_module_stats(&st);
	t_check(!st.perf_events && !st.pinned_pages && st.vms == 1,
		"destroy_everything_nothing_held",
		"with no context left: perf_events %" PRId64 " pinned_pages %"
		PRId64 " vms %" PRId64, (int64_t)st.perf_events,
		(int64_t)st.pinned_pages, (int64_t)st.vms);
	hl_vm_destroy(&b.vm);
	hl_check_module_idle("destroy_everything_module_idle");
}

static void t_rebind(void)
{
	static struct busy_vm b;
	struct pvpfm_pmu_info info;
	int i, ret;

	if (busy_vm_run(&b, 2, 50, "rebind_setup"))
		return;
	hl_vm_close_pfm(&b.vm);
	hl_check_module_idle("rebind_first_binding_gone");
	ret = hl_vm_bind(&b.vm);
	for (i = 0; !ret && i < b.vm.nr_vcpus; i++)
		ret = hl_call(&b.vm.vcpus[i], hl_vcpu_bind_fn, NULL);
	HL_EXPECT("rebind_same_vm_and_threads", ret, 0);
	ret = ret ? ret : cb_pmu_info(&b.vm.vcpus[1].cb, &info);
	ret = ret ? ret : busy_ctx(&b, &b.vm.vcpus[1]);
	HL_EXPECT("rebind_works", ret, 0);
	hl_vm_destroy(&b.vm);
	hl_check_module_idle("rebind_module_idle");
}

/* a thread of a second binding of the VM: KVM vCPU 0 is what it runs */
struct second_req {
	struct hl_vm *vm;
	int fd;
	int bind, db_before, run, db;	/* 0, -errno or the block's status */
};

static int second_thread(void *p)
{
	struct kvmpfm_cmd_block cb = { .vcpu = 0, .gpa = HL_CMD_GPA(0) };
	struct second_req *r = p;
	void *block = hl_hva(r->vm, HL_CMD_GPA(0));

	r->bind = HL_IOCTL(r->fd, KVMPFM_BIND_VCPU, 0UL);
	r->bind = r->bind ? r->bind : HL_IOCTL(r->fd, KVMPFM_SET_CMD_BLOCK, &cb);
	if (r->bind)
		return 0;
	r->db_before = hl_pmu_info_doorbell(r->fd, 0, block);
	r->run = hl_run_io(&r->vm->vcpus[0], 1);
	r->db = hl_pmu_info_doorbell(r->fd, 0, block);
	return 0;
}

static int run_once_fn(struct hl_vcpu *v, void *unused)
{
	(void)unused;
	return hl_run_io(v, 1);
}

/*
 * One binding per VM: a second file binds (BIND_VM names no VM), but
 * once a thread of it has entered a VM the first binding's vCPU runs,
 * its DOORBELL is refused; the first goes on working; once both are
 * closed the VM binds again.
 */
static void t_one_binding(void)
{
	struct second_req r;
	struct hl_vm vm;
	struct hl_vcpu *v;
	uint32_t id = 0;
	int fd1, ret;

	if (!hl_check_vm("one_binding_setup", hl_vm_simple(&vm, 1)))
		return;
	v = &vm.vcpus[0];
	fd1 = vm.pfm_fd;
	/* the first binding's vCPU enters the VM and rings: the VM is its */
	ret = hl_call(v, run_once_fn, NULL);
	ret = ret ? ret : cb_pmu_info(&v->cb, &(struct pvpfm_pmu_info){ 0 });
	HL_EXPECT("one_binding_first_entered", ret, 0);
	ret = hl_vm_bind(&vm);		/* a second file, same process */
	HL_EXPECT("one_binding_second_binds", ret, 0);
	memset(&r, 0, sizeof(r));
	r.vm = &vm;
	r.fd = vm.pfm_fd;
	ret = ret ? ret : hl_on_new_thread(second_thread, &r);
	HL_EXPECT("one_binding_second_vcpu_binds", ret ? ret : r.bind, 0);
	HL_EXPECT("one_binding_second_before_entry_ok", r.db_before, 0);
	HL_EXPECT("one_binding_second_entered", r.run, 0);
	HL_EXPECT("one_binding_second_ebusy", r.db, -EBUSY);
	hl_vm_close_pfm(&vm);
	vm.pfm_fd = fd1;
	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	ret = ret ? ret : cb_destroy(&v->cb, id);
	HL_EXPECT("one_binding_first_works", ret, 0);
	hl_vm_close_pfm(&vm);
	ret = hl_vm_bind(&vm);
	ret = ret ? ret : hl_call(v, hl_vcpu_bind_fn, NULL);
	ret = ret ? ret : hl_call(v, run_once_fn, NULL);
	ret = ret ? ret : cb_pmu_info(&v->cb, &(struct pvpfm_pmu_info){ 0 });
	HL_EXPECT("one_binding_after_close", ret, 0);
	hl_vm_destroy(&vm);
	hl_check_module_idle("one_binding_module_idle");
}

int main(void)
{
	hl_init();
	hl_check_allow_host_page_faults();
	t_close_pfm_fd();
	t_vm_in_child("kill_child", 0);
	t_vm_in_child("child_exit", 1);
	t_close_vm_fd_first();
	t_vm_gone_first();
	t_vcpu_threads_exit();
	t_destroy_everything();
	t_rebind();
	t_one_binding();
	hl_check_module_idle("teardown_module_idle");
	return t_done();
}
