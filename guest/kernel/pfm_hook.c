// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread contexts follow their thread from vCPU to vCPU.
 *
 * The host counts a per-thread context only while it is "in" on a vCPU.
 * A hook (one per loaded per-thread context) sits on its thread's preempt
 * notifiers and issues SWITCH when the thread leaves a vCPU (out) or
 * enters one (in); when a monitored thread replaces another one, a single
 * SWITCH does both. Threads without a hook have no notifier, so their
 * context switches cost nothing.
 *
 * A preempt notifier can only be added to or removed from the running
 * thread, so every change to the list is made by the thread itself:
 *   - self-monitoring (pfm_load_context on itself): at load, in the same
 *     preemption-disabled section as the LOAD command, so the context is
 *     in from the first instruction;
 *   - another thread (stopped or running): LOAD without PVPFM_LOAD_SELF,
 *     then a task_work links the hook and switches the context in when
 *     the thread next returns to user mode (TWA_RESUME kicks a running
 *     one; one asleep in a system call is counted from its return);
 *   - unload or close from another thread: the hook is deactivated at once
 *     (the notifiers then do nothing) and a task_work unlinks it;
 *   - thread exit: the sched_process_exit tracepoint, which runs in the
 *     exiting thread before its last task_work, unloads the context and
 *     unlinks. The host queues PFM_MSG_END (PVPFM_UNLOAD_TASK_EXIT) for
 *     a thread another one monitored, not for a self-monitoring one, as
 *     perfmon2's __pfm_exit_thread(): a program whose threads each
 *     monitor themselves, with SIGIO asked for on their context fds,
 *     gets no signal from a thread's end.
 *   - an exec that changes credentials (setuid, setgid, file capabilities:
 *     the new mm is not SUID_DUMP_USER): the sched_process_exec
 *     tracepoint, in the thread before the new program's first
 *     instruction, unloads as its exit does. Monitoring stops there, as
 *     perf's events do (begin_new_exec() calls perf_event_exit_task());
 *     the monitor reads the counts up to the exec and gets PFM_MSG_END,
 *     a self-monitoring thread's too: the thread lives on, unmonitored.
 *     A hook whose link is still queued then is not on the notifiers yet:
 *     its link looks at the thread's exec count (self_exec_id), noted
 *     before the ptrace check, and does the same when an exec came in
 *     between and left a program its old owner may not dump. The check
 *     (mm_access()) and exec's credential change (begin_new_exec(), which
 *     also counts the exec) both hold the thread's exec_update_lock, so a
 *     check that saw the old credentials was made before that exec was
 *     counted: no exec is missed, without holding a lock of the thread
 *     across the load.
 *
 * PFM_FL_NOTIFY_BLOCK: once the host says the context is blocked (after a
 * notification, pfm_notify.c asks), a task_work stops the thread on its way
 * back to user mode until pfm_restart, unload, close or its exit clears
 * block_wait. It sleeps interruptibly: a signal ends the wait, as in
 * perfmon2 (fatal ones so it dies, the others so job control and ptrace
 * stops work); the context then stays masked until pfm_restart.
 *
 * h->lock orders the notifiers (sched_out runs with the runqueue lock
 * held and interrupts off) against the other CPUs that stop a hook:
 * whoever deactivates a hook does so, and sends its host command, under
 * the lock, so no SWITCH for it is in flight afterwards. It nests inside
 * the runqueue lock, which interrupt handlers take to wake tasks: so it is
 * a raw spinlock, always taken with interrupts off. Nothing is printed
 * here: printk from the scheduler can deadlock.
 *
 * A hook holds a reference on the module: a notifier may stay linked on a
 * thread (inactive) until that thread runs again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ktime.h>
#include <linux/preempt.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include "pfm_drv.h"

#ifndef CONFIG_PREEMPT_NOTIFIERS
#error "perfmon2.ko needs CONFIG_PREEMPT_NOTIFIERS (selected by CONFIG_KVM)"
#endif

struct pfm_hook {
	struct preempt_notifier pn;
	struct callback_head link_work;
	struct callback_head unlink_work;
	raw_spinlock_t lock;
	refcount_t refs;
	struct task_struct *task;	/* the monitored thread */
	u64 exec_id;	/* @task's self_exec_id when the hook was made */
	u32 ctx_id;
	bool self;	/* loaded by @task itself: its end queues no END */
	bool active;	/* the host has the context loaded on @task */
	bool in;	/* ... and in, on the vCPU @task runs on */
	bool linked;	/* on @task's preempt notifiers */
	/* NOTIFY_BLOCK: @task waits in block_work until block_wait is false */
	struct callback_head block_work;
	wait_queue_head_t block_wq;
	bool block_wait;
	bool block_queued;	/* block_work queued or running */
};

static struct preempt_ops pfm_preempt_ops;
static struct tracepoint *pfm_exit_tp, *pfm_exec_tp;

static struct pfm_hook *hook_of(struct preempt_notifier *pn)
{
	return container_of(pn, struct pfm_hook, pn);
}

atomic_t pfm_task_sessions = ATOMIC_INIT(0);

/* h->lock held: the host loaded (or no longer has) the context on @task */
static void hook_set_active(struct pfm_hook *h, bool active)
{
	if (h->active == active)
		return;
	WRITE_ONCE(h->active, active);
	atomic_add(active ? 1 : -1, &pfm_task_sessions);
}

static void pfm_hook_put(struct pfm_hook *h)
{
	if (!refcount_dec_and_test(&h->refs))
		return;
	put_task_struct(h->task);
	kfree(h);
	module_put(THIS_MODULE);
}

/* h->lock held, preemption disabled, h->task == current */
static void hook_link_current(struct pfm_hook *h)
{
	preempt_notifier_register(&h->pn);
	h->linked = true;
	refcount_inc(&h->refs);		/* dropped by whoever unlinks */
}

/* h->lock held, h->task == current; the caller puts the reference */
static void hook_unlink_current(struct pfm_hook *h)
{
	preempt_notifier_unregister(&h->pn);
	h->linked = false;
}

static int hook_switch(u32 out, u32 in, struct task_struct *in_task)
{
	struct pvpfm_switch_arg arg = {
		.out_ctx = out,
		.in_ctx = in,
		.in_tid = in ? in_task->pid : 0,
		.in_tgid = in ? in_task->tgid : 0,
	};
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_SWITCH,
		.arg = &arg,
		.arg_size = sizeof(arg),
	};
	u64 start = ktime_get_ns();
	int ret;

	ret = pfm_dev_exec_locked(&req);
	if (!ret)
		ret = req.status;
	if (in)
		pfm_stat_add(PFM_ST_CTXSWIN_COUNT, 1);
	if (out)
		pfm_stat_add(PFM_ST_CTXSWOUT_COUNT, 1);
	pfm_stat_add(in ? PFM_ST_CTXSWIN_NS : PFM_ST_CTXSWOUT_NS,
		     ktime_get_ns() - start);
	atomic64_inc(&pfm_dev_stats.switches);
	if (ret) {
		atomic64_inc(&pfm_dev_stats.switch_errors);
		atomic_set(&pfm_dev_stats.last_switch_error, ret);
	}
	return ret;
}

/*
 * The monitored thread ended, or exec'd a program its monitor may not
 * follow (@exec): unload. PFM_MSG_END for another thread's monitor, and
 * at such an exec for any (the thread lives on, unmonitored)
 */
static void hook_unload_ended(struct pfm_hook *h, bool exec)
{
	struct pvpfm_unload_arg arg = {
		.flags = exec || !h->self ? PVPFM_UNLOAD_TASK_EXIT : 0,
	};
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_UNLOAD_CONTEXT,
		.ctx_id = h->ctx_id,
		.arg = &arg,
		.arg_size = sizeof(arg),
	};

	pfm_dev_exec_locked(&req);
	hook_set_active(h, false);
	h->in = false;
	/* the thread is exiting: it is not waiting, nor will it */
	h->block_wait = false;
}

/*
 * The active hook of @next, which is about to run here: it runs nowhere,
 * so its notifier list (changed only by itself) is stable.
 */
static struct pfm_hook *active_hook_of(struct task_struct *next)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &next->preempt_notifiers, link)
		if (pn->ops == &pfm_preempt_ops && READ_ONCE(hook_of(pn)->active))
			return hook_of(pn);
	return NULL;
}

/* @out leaves this vCPU and @in (locked) enters it: one SWITCH if it can */
static void hook_switch_pair(struct pfm_hook *out, struct pfm_hook *in,
			     struct task_struct *next)
{
	if (!in->active || in->in) {
		hook_switch(out->ctx_id, 0, NULL);
		return;
	}
	if (!hook_switch(out->ctx_id, in->ctx_id, next)) {
		in->in = true;
		return;
	}
	/* the host refused the pair: each half on its own */
	hook_switch(out->ctx_id, 0, NULL);
	in->in = !hook_switch(0, in->ctx_id, next);
}

static void pfm_sched_out(struct preempt_notifier *pn, struct task_struct *next)
{
	struct pfm_hook *out = hook_of(pn), *in;

	raw_spin_lock(&out->lock);
	if (out->active && out->in) {
		/* a monitored thread takes its place: one SWITCH does both */
		in = active_hook_of(next);
		if (in) {
			raw_spin_lock_nested(&in->lock, SINGLE_DEPTH_NESTING);
			hook_switch_pair(out, in, next);
			raw_spin_unlock(&in->lock);
		} else {
			hook_switch(out->ctx_id, 0, NULL);
		}
		out->in = false;
	}
	raw_spin_unlock(&out->lock);
}

static void pfm_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct pfm_hook *h = hook_of(pn);
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	if (h->active && !h->in)
		h->in = !hook_switch(0, h->ctx_id, current);
	raw_spin_unlock_irqrestore(&h->lock, flags);
}

static struct preempt_ops pfm_preempt_ops = {
	.sched_in = pfm_sched_in,
	.sched_out = pfm_sched_out,
};

/* a program the owner of the thread's previous one may not dump */
static bool exec_changed_owner(void)
{
	return current->mm && !pfm_current_dumpable_by_owner();
}

/* attach: runs in the monitored thread when it resumes */
static void pfm_hook_link_fn(struct callback_head *cb)
{
	struct pfm_hook *h = container_of(cb, struct pfm_hook, link_work);
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	if (h->active && !h->linked) {
		if (current->flags & PF_EXITING) {
			/* too late to follow it: it is ending */
			hook_unload_ended(h, false);
		} else if (READ_ONCE(current->self_exec_id) != h->exec_id &&
			   exec_changed_owner()) {
			/* what pfm_exec_probe() did to the linked ones */
			hook_unload_ended(h, true);
		} else {
			hook_link_current(h);
			h->in = !hook_switch(0, h->ctx_id, current);
		}
	}
	raw_spin_unlock_irqrestore(&h->lock, flags);
	pfm_hook_put(h);
}

/* detach from another thread: runs in the monitored thread */
static void pfm_hook_unlink_fn(struct callback_head *cb)
{
	struct pfm_hook *h = container_of(cb, struct pfm_hook, unlink_work);
	unsigned long flags;
	bool was_linked;

	raw_spin_lock_irqsave(&h->lock, flags);
	was_linked = h->linked;
	if (was_linked)
		hook_unlink_current(h);
	raw_spin_unlock_irqrestore(&h->lock, flags);
	if (was_linked)
		pfm_hook_put(h);
	pfm_hook_put(h);
}

/* NOTIFY_BLOCK: runs in the monitored thread on its way to user mode */
static void pfm_hook_block_fn(struct callback_head *cb)
{
	struct pfm_hook *h = container_of(cb, struct pfm_hook, block_work);
	unsigned long flags;
	bool exiting;
	int ret;

	for (;;) {
		/* exit runs task_works too: an exiting thread never waits */
		exiting = current->flags & PF_EXITING;
		ret = exiting ? 0 : wait_event_interruptible(h->block_wq,
						!READ_ONCE(h->block_wait));
		raw_spin_lock_irqsave(&h->lock, flags);
		/* blocked again since the wake-up: this work stays in charge */
		if (ret || exiting || !h->block_wait)
			break;
		raw_spin_unlock_irqrestore(&h->lock, flags);
	}
	h->block_queued = false;
	raw_spin_unlock_irqrestore(&h->lock, flags);
	pfm_hook_put(h);
}

/* end a wait; @h->lock not held (the wait queue has its own lock) */
static void hook_wake(struct pfm_hook *h, bool was_waiting)
{
	if (was_waiting)
		wake_up_all(&h->block_wq);
}

/* unload every context loaded on current, at its exit or @exec, and unlink */
static void hooks_unload_current(bool exec)
{
	struct preempt_notifier *pn;
	struct hlist_node *tmp;
	unsigned long flags;
	struct pfm_hook *h;

	hlist_for_each_entry_safe(pn, tmp, &current->preempt_notifiers, link) {
		if (pn->ops != &pfm_preempt_ops)
			continue;
		h = hook_of(pn);
		raw_spin_lock_irqsave(&h->lock, flags);
		if (h->active)
			hook_unload_ended(h, exec);
		hook_unlink_current(h);
		raw_spin_unlock_irqrestore(&h->lock, flags);
		pfm_hook_put(h);
	}
}

/* sched_process_exit: in the exiting thread, before its last task_work */
static void pfm_exit_probe(void *data, struct task_struct *task)
{
	if (task == current)
		hooks_unload_current(false);
}

/*
 * sched_process_exec: in the thread, its new credentials committed, before
 * the new program runs. The test is perf's: a program the old owner could
 * not dump (setuid, setgid, capabilities, unreadable) is not monitored.
 */
static void pfm_exec_probe(void *data, struct task_struct *task,
			   pid_t old_pid, struct linux_binprm *bprm)
{
	if (task != current || !exec_changed_owner())
		return;
	hooks_unload_current(true);
}

struct pfm_hook *pfm_hook_alloc(u32 ctx_id, struct task_struct *task)
{
	struct pfm_hook *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return NULL;
	__module_get(THIS_MODULE);
	raw_spin_lock_init(&h->lock);
	refcount_set(&h->refs, 1);	/* the context's */
	get_task_struct(task);
	h->task = task;
	/* before the caller's ptrace check: see the top of this file */
	h->exec_id = READ_ONCE(task->self_exec_id);
	h->ctx_id = ctx_id;
	preempt_notifier_init(&h->pn, &pfm_preempt_ops);
	init_task_work(&h->link_work, pfm_hook_link_fn);
	init_task_work(&h->unlink_work, pfm_hook_unlink_fn);
	init_task_work(&h->block_work, pfm_hook_block_fn);
	init_waitqueue_head(&h->block_wq);
	return h;
}

/*
 * Self-monitoring: run @load (PVPFM_LOAD_SELF) and link the hook with no
 * context switch in between: the host puts the context in on this vCPU,
 * and from the next switch on the notifiers keep it right.
 */
int pfm_hook_load_self(struct pfm_hook *h, struct pfm_dev_req *load)
{
	unsigned long flags;
	int ret;

	if (WARN_ON_ONCE(h->task != current))
		return -EINVAL;
	raw_spin_lock_irqsave(&h->lock, flags);
	ret = pfm_dev_exec_locked(load);
	if (!ret)
		ret = load->status;
	if (!ret) {
		h->self = true;
		hook_set_active(h, true);
		h->in = true;
		hook_link_current(h);
	}
	raw_spin_unlock_irqrestore(&h->lock, flags);
	return ret;
}

/*
 * Another thread, loaded (not in) on the host: link the hook from that
 * thread when it resumes. A thread past its last task_work is ending:
 * then the context is unloaded here, as its exit would have done.
 */
int pfm_hook_attach(struct pfm_hook *h)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	hook_set_active(h, true);
	raw_spin_unlock_irqrestore(&h->lock, flags);
	refcount_inc(&h->refs);		/* the task_work's */
	if (!task_work_add(h->task, &h->link_work, TWA_RESUME))
		return 0;
	pfm_hook_put(h);
	raw_spin_lock_irqsave(&h->lock, flags);
	if (h->active)
		hook_unload_ended(h, false);
	raw_spin_unlock_irqrestore(&h->lock, flags);
	return 0;
}

/* false once the monitored thread ended or the hook was stopped */
bool pfm_hook_active(struct pfm_hook *h)
{
	return READ_ONCE(h->active);
}

/*
 * Deactivate the hook, sending @req (UNLOAD or DESTROY) to the host in
 * the same critical section, so that no SWITCH of this context is in
 * flight on any CPU afterwards. Returns false (and sends nothing) when
 * the hook was not active: the context is not loaded any more.
 */
bool pfm_hook_stop(struct pfm_hook *h, struct pfm_dev_req *req, int *ret)
{
	bool ran = false, unlinked = false, waiting;
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	/* unloaded or destroyed: a blocked thread goes on */
	waiting = h->block_wait;
	h->block_wait = false;
	if (h->active) {
		*ret = pfm_dev_exec_locked(req);
		if (!*ret)
			*ret = req->status;
		ran = true;
		hook_set_active(h, false);
		h->in = false;
	}
	if (h->linked && h->task == current) {
		hook_unlink_current(h);
		unlinked = true;
	}
	raw_spin_unlock_irqrestore(&h->lock, flags);
	hook_wake(h, waiting);
	if (unlinked)
		pfm_hook_put(h);
	return ran;
}

/* whether the host should be asked if the context blocked its thread */
bool pfm_hook_may_block(struct pfm_hook *h)
{
	return READ_ONCE(h->active) && !READ_ONCE(h->block_wait);
}

/*
 * The host blocked the context (NOTIFY_BLOCK): stop the thread before it
 * returns to user mode. TWA_RESUME: a running thread gets there at its
 * next interrupt or system call; one in a system call is not interrupted.
 * Called with the context's lock held, which orders it against
 * pfm_hook_unblock() from pfm_restart.
 */
void pfm_hook_block(struct pfm_hook *h)
{
	bool queue = false;
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	if (h->active && !h->block_wait) {
		h->block_wait = true;
		queue = !h->block_queued;
		h->block_queued = true;
	}
	raw_spin_unlock_irqrestore(&h->lock, flags);
	if (!queue)
		return;
	refcount_inc(&h->refs);		/* the task_work's */
	if (!task_work_add(h->task, &h->block_work, TWA_RESUME))
		return;
	/* past its last task_work: it exits, it does not wait */
	raw_spin_lock_irqsave(&h->lock, flags);
	h->block_queued = false;
	h->block_wait = false;
	raw_spin_unlock_irqrestore(&h->lock, flags);
	pfm_hook_put(h);
}

/* pfm_restart: the thread goes on (context lock held) */
void pfm_hook_unblock(struct pfm_hook *h)
{
	unsigned long flags;
	bool waiting;

	raw_spin_lock_irqsave(&h->lock, flags);
	waiting = h->block_wait;
	h->block_wait = false;
	raw_spin_unlock_irqrestore(&h->lock, flags);
	hook_wake(h, waiting);
}

/* the context lets go of a stopped (or never started) hook */
void pfm_hook_release(struct pfm_hook *h)
{
	bool linked, waiting;
	unsigned long flags;

	raw_spin_lock_irqsave(&h->lock, flags);
	WARN_ON_ONCE(h->active);
	hook_set_active(h, false);
	/* stopped hooks do not block: no thread is left waiting on this one */
	waiting = h->block_wait;
	h->block_wait = false;
	/* an inactive hook never gets linked again: this settles it */
	linked = h->linked;
	raw_spin_unlock_irqrestore(&h->lock, flags);
	hook_wake(h, waiting);
	if (linked) {
		refcount_inc(&h->refs);		/* the task_work's */
		/* failure: the thread is past its exit, which unlinked it */
		if (task_work_add(h->task, &h->unlink_work, TWA_RESUME))
			pfm_hook_put(h);
	}
	pfm_hook_put(h);
}

static void pfm_find_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		pfm_exit_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		pfm_exec_tp = tp;
}

int pfm_hooks_init(void)
{
	int ret;

	for_each_kernel_tracepoint(pfm_find_tps, NULL);
	if (!pfm_exit_tp || !pfm_exec_tp) {
		pr_err("no sched_process_exit/exec tracepoint: cannot follow thread exits and execs\n");
		return -ENOENT;
	}
	ret = tracepoint_probe_register(pfm_exit_tp, (void *)pfm_exit_probe,
					NULL);
	if (ret) {
		pr_err("cannot hook thread exits (%d)\n", ret);
		return ret;
	}
	ret = tracepoint_probe_register(pfm_exec_tp, (void *)pfm_exec_probe,
					NULL);
	if (ret) {
		pr_err("cannot hook execs (%d)\n", ret);
		tracepoint_probe_unregister(pfm_exit_tp,
					    (void *)pfm_exit_probe, NULL);
		tracepoint_synchronize_unregister();
		return ret;
	}
	preempt_notifier_inc();
	return 0;
}

void pfm_hooks_exit(void)
{
	tracepoint_probe_unregister(pfm_exec_tp, (void *)pfm_exec_probe, NULL);
	tracepoint_probe_unregister(pfm_exit_tp, (void *)pfm_exit_probe, NULL);
	tracepoint_synchronize_unregister();
	preempt_notifier_dec();
}
