// SPDX-License-Identifier: GPL-2.0
/*
 * The host's notifications to a context fd: messages and NOTIFY_BLOCK.
 *
 * Messages: read() returns one pfarg_msg_t (PVPFM_CMD_READ_MSG); poll()
 * and SIGIO wake up on the device's MSI-X interrupts, or every
 * PFM_NOTIFY_POLL when the device has none.
 *
 * PFM_FL_NOTIFY_BLOCK: after such an interrupt, each loaded context created
 * with it asks the host whether it blocked (PVPFM_CMD_CTX_STATE); if so
 * its thread is stopped on its way to user mode (pfm_hook_block()) until
 * pfm_restart, unload or close. The context's lock orders the question
 * against pfm_restart.
 *
 * PFM_FL_OVFL_NO_MSG: the host interrupts without queuing a message, and
 * perfmon2 still sent SIGIO (pfm_notify_user()): a sampler whose SIGIO
 * handler calls pfm_restart depends on it. So a context with it and an
 * fasync owner asks the same question, and a context newly masked gets
 * one SIGIO (POLL_IN, as perfmon2's), until pfm_restart, load or unload
 * re-arm it. Only these two kinds of context cost a command.
 *
 * The work after an interrupt takes a reference on each context it will
 * visit under pfm_notify_lock, then visits them without it, and never
 * waits for a context's lock: one busy with a call is visited again a
 * moment later (PFM_NOTIFY_RETRY), so that no context can hold up the
 * others' notifications, nor any create or close.
 */
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "pfm_drv.h"

/* how often messages are looked for when the device has no interrupts */
#define PFM_NOTIFY_POLL		(HZ / 10)
/* a blocked read() asks the host again after this, interrupt or not */
#define PFM_NOTIFY_RECHECK	HZ
/* the work visits again after this when a context's lock was taken */
#define PFM_NOTIFY_RETRY	(HZ / 100 ?: 1)

/* every open context, for the work after an interrupt */
static LIST_HEAD(pfm_notify_ctxs);
static DEFINE_MUTEX(pfm_notify_lock);	/* pfm_notify_ctxs */

/* the MSI-X handler bumps pfm_notify_seq and wakes pfm_notify_wq */
static DECLARE_WAIT_QUEUE_HEAD(pfm_notify_wq);
static atomic_t pfm_notify_seq;

static void pfm_notify_work_fn(struct work_struct *work);
static void pfm_notify_timer_fn(struct work_struct *work);
static void pfm_notify_retry_fn(struct work_struct *work);
static DECLARE_WORK(pfm_notify_work, pfm_notify_work_fn);
static DECLARE_DELAYED_WORK(pfm_notify_timer, pfm_notify_timer_fn);
static DECLARE_DELAYED_WORK(pfm_notify_retry, pfm_notify_retry_fn);
/* the device is going: the works schedule nothing again */
static bool pfm_notify_stopping;

/* from the MSI-X handler: some context of some vCPU has a message */
void pfm_notify_irq(void)
{
	atomic_inc(&pfm_notify_seq);
	wake_up_interruptible_all(&pfm_notify_wq);
	schedule_work(&pfm_notify_work);
}

/* read one message ahead (msg_lock held): 0, -EAGAIN if none, or error */
static int pfm_notify_fetch(struct pfm_ctx *ctx)
{
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_READ_MSG,
		.ctx_id = ctx->id,
		.arg = &ctx->msg,
		.arg_size = sizeof(ctx->msg),
	};
	int ret;

	if (ctx->msg_ready)
		return 0;
	if (ctx->closed)
		return -EBADF;
	ret = pfm_dev_call(&req);
	if (!ret) {
		ctx->msg_ready = true;
		pfm_stat_add(PFM_ST_OVFL_NOTIFY_COUNT, 1);
		/*
		 * A new message: SIGIO, whoever fetched it (perfmon2 signals
		 * every notification, even to a process blocked in read()).
		 */
		if (READ_ONCE(ctx->fasync))
			kill_fasync(&ctx->fasync, SIGIO, POLL_IN);
	}
	return ret;
}

static bool pfm_notify_pending(struct pfm_ctx *ctx)
{
	bool ready;

	mutex_lock(&ctx->msg_lock);
	ready = !pfm_notify_fetch(ctx);
	mutex_unlock(&ctx->msg_lock);
	return ready;
}

/*
 * Whether the host is to be asked about @ctx's state (context lock held):
 * NOTIFY_BLOCK, a thread that may block; NO_MSG, a SIGIO not yet sent.
 */
static bool pfm_notify_ask(struct pfm_ctx *ctx, bool *block, bool *sigio)
{
	*block = (ctx->flags & PFM_FL_NOTIFY_BLOCK) && ctx->hook &&
		 pfm_hook_may_block(ctx->hook);
	*sigio = (ctx->flags & PFM_FL_OVFL_NO_MSG) && !ctx->nomsg_signalled &&
		 READ_ONCE(ctx->fasync);
	return *block || *sigio;
}

/*
 * NOTIFY_BLOCK: did the host block the context? Then stop its thread.
 * NO_MSG: is it masked, notified without a message? Then SIGIO.
 * False when the context's lock is taken: ask again later.
 */
static bool pfm_notify_state(struct pfm_ctx *ctx)
{
	struct pvpfm_ctx_state st;
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_CTX_STATE,
		.ctx_id = ctx->id,
		.arg = &st,
		.arg_size = sizeof(st),
	};
	bool block, sigio;

	if (!mutex_trylock(&ctx->lock))
		return false;
	if (!READ_ONCE(ctx->closed) && pfm_notify_ask(ctx, &block, &sigio) &&
	    !pfm_dev_call(&req)) {
		if (block && (st.flags & PVPFM_CTX_BLOCKED))
			pfm_hook_block(ctx->hook);
		if (sigio && (st.flags & PVPFM_CTX_MASKED)) {
			ctx->nomsg_signalled = true;
			kill_fasync(&ctx->fasync, SIGIO, POLL_IN);
		}
	}
	mutex_unlock(&ctx->lock);
	return true;
}

static bool pfm_notify_wanted(struct pfm_ctx *ctx)
{
	return (ctx->flags & (PFM_FL_NOTIFY_BLOCK | PFM_FL_OVFL_NO_MSG)) ||
	       READ_ONCE(ctx->fasync);
}

/* one context: false if it is to be visited again */
static bool pfm_notify_visit(struct pfm_ctx *ctx)
{
	bool done = true;

	if (ctx->flags & (PFM_FL_NOTIFY_BLOCK | PFM_FL_OVFL_NO_MSG))
		done = pfm_notify_state(ctx);
	/* fetching a new message sends the SIGIO; msg_lock is held briefly */
	if (READ_ONCE(ctx->fasync))
		pfm_notify_pending(ctx);
	return done;
}

/*
 * After an interrupt: the state of the NOTIFY_BLOCK and NO_MSG contexts,
 * SIGIO for the contexts that asked for it and have a new message.
 */
static void pfm_notify_work_fn(struct work_struct *work)
{
	struct pfm_ctx *ctx, *next;
	LIST_HEAD(visit);
	bool again = false;

	pfm_stat_add(PFM_ST_HANDLE_WORK_COUNT, 1);
	mutex_lock(&pfm_notify_lock);
	list_for_each_entry(ctx, &pfm_notify_ctxs, node) {
		if (!pfm_notify_wanted(ctx))
			continue;
		refcount_inc(&ctx->refs);
		list_add_tail(&ctx->visit, &visit);
	}
	mutex_unlock(&pfm_notify_lock);
	list_for_each_entry_safe(ctx, next, &visit, visit) {
		list_del_init(&ctx->visit);
		if (!pfm_notify_visit(ctx))
			again = true;
		pfm_ctx_put(ctx);
	}
	if (again && !READ_ONCE(pfm_notify_stopping))
		schedule_delayed_work(&pfm_notify_retry, PFM_NOTIFY_RETRY);
}

static void pfm_notify_retry_fn(struct work_struct *work)
{
	if (!READ_ONCE(pfm_notify_stopping))
		schedule_work(&pfm_notify_work);
}

/* no interrupts: look for messages periodically while contexts exist */
static void pfm_notify_timer_fn(struct work_struct *work)
{
	bool any;

	mutex_lock(&pfm_notify_lock);
	any = !list_empty(&pfm_notify_ctxs);
	mutex_unlock(&pfm_notify_lock);
	if (!any)
		return;
	pfm_notify_irq();
	schedule_delayed_work(&pfm_notify_timer, PFM_NOTIFY_POLL);
}

/* a new context; without interrupts, its messages are polled */
void pfm_notify_add(struct pfm_ctx *ctx)
{
	mutex_lock(&pfm_notify_lock);
	list_add(&ctx->node, &pfm_notify_ctxs);
	mutex_unlock(&pfm_notify_lock);
	if (!pfm_dev_info.nr_irqs)
		schedule_delayed_work(&pfm_notify_timer, PFM_NOTIFY_POLL);
}

/*
 * close() or a failed create: off the list; the work may still hold the
 * context, and sends no command for it from now on.
 */
void pfm_notify_del(struct pfm_ctx *ctx)
{
	mutex_lock(&pfm_notify_lock);
	list_del(&ctx->node);
	mutex_unlock(&pfm_notify_lock);
	mutex_lock(&ctx->msg_lock);
	WRITE_ONCE(ctx->closed, true);
	mutex_unlock(&ctx->msg_lock);
}

/*
 * References on the open contexts @want picks, in a new array (*@ctxs,
 * to kfree; each to pfm_ctx_put()): how many, 0 if none or no memory.
 */
int pfm_notify_collect(struct pfm_ctx ***ctxs,
		       bool (*want)(const struct pfm_ctx *ctx))
{
	struct pfm_ctx *ctx, **arr = NULL;
	int n = 0, i = 0;

	mutex_lock(&pfm_notify_lock);
	list_for_each_entry(ctx, &pfm_notify_ctxs, node)
		n += want(ctx);
	if (n)
		arr = kmalloc_array(n, sizeof(*arr), GFP_KERNEL);
	if (arr) {
		list_for_each_entry(ctx, &pfm_notify_ctxs, node) {
			if (!want(ctx))
				continue;
			refcount_inc(&ctx->refs);
			arr[i++] = ctx;
		}
	}
	mutex_unlock(&pfm_notify_lock);
	*ctxs = arr;
	return i;
}

ssize_t pfm_notify_read(struct file *file, char __user *buf, size_t size,
			loff_t *ppos)
{
	struct pfm_ctx *ctx = file->private_data;
	pfarg_msg_t msg;
	long left;
	int seq, ret;

	if (size < sizeof(msg))
		return -EINVAL;
	for (;;) {
		seq = atomic_read(&pfm_notify_seq);
		if (mutex_lock_interruptible(&ctx->msg_lock))
			return -ERESTARTSYS;
		ret = pfm_notify_fetch(ctx);
		if (!ret) {
			msg = ctx->msg;
			ctx->msg_ready = false;
		}
		mutex_unlock(&ctx->msg_lock);
		if (ret != -EAGAIN)
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		left = wait_event_interruptible_timeout(pfm_notify_wq,
							atomic_read(&pfm_notify_seq) != seq,
							PFM_NOTIFY_RECHECK);
		if (left < 0)
			return -ERESTARTSYS;
	}
	if (ret)
		return ret;
	if (copy_to_user(buf, &msg, sizeof(msg)))
		return -EFAULT;
	return sizeof(msg);
}

__poll_t pfm_notify_poll(struct file *file, poll_table *wait)
{
	struct pfm_ctx *ctx = file->private_data;

	poll_wait(file, &pfm_notify_wq, wait);
	return pfm_notify_pending(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}

int pfm_notify_fasync(int fd, struct file *file, int on)
{
	struct pfm_ctx *ctx = file->private_data;

	return fasync_helper(fd, file, on, &ctx->fasync);
}

/* at probe, a device bound again after a removal included */
void pfm_notify_init(void)
{
	WRITE_ONCE(pfm_notify_stopping, false);
}

/* after the device's interrupts are gone: nothing schedules work again */
void pfm_notify_exit(void)
{
	WRITE_ONCE(pfm_notify_stopping, true);
	cancel_delayed_work_sync(&pfm_notify_timer);
	/* a work already running may schedule the other once more */
	cancel_delayed_work_sync(&pfm_notify_retry);
	cancel_work_sync(&pfm_notify_work);
	cancel_delayed_work_sync(&pfm_notify_retry);
}
