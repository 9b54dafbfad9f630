// SPDX-License-Identifier: GPL-2.0
/*
 * Migration: a VM's perfmon2 state out of the source's binding
 * (KVMPFM_GET_STATE) and into a fresh binding on the destination
 * (KVMPFM_SET_STATE). The engine owns the stream (engine/pfm_stream.c):
 * this file holds the vCPUs still, bounds and copies the bytes, and puts
 * the engine's verdict into words for the VMM.
 *
 * Both run under vm->lock, so no vCPU delivers an overflow or makes a
 * DOORBELL while the stream is read or written, and only while no bound
 * vCPU thread is inside KVM_RUN (kvmpfm_kvm.c): the VMM has stopped its
 * vCPUs, as it must for a consistent stream; a running vCPU is EBUSY,
 * never a wait. The stream moves between the VMM's
 * memory and a kernel buffer (at most the VM's largest stream) with
 * neither held: SET_STATE copies it in before, GET_STATE out after.
 */
#include <linux/uaccess.h>
#include "kvmpfm.h"

/* the uapi's reasons are the engine's */
static_assert(KVMPFM_STATE_MALFORMED == PFM_STREAM_MALFORMED);
static_assert(KVMPFM_STATE_VERSION == PFM_STREAM_VERSION);
static_assert(KVMPFM_STATE_MISMATCH == PFM_STREAM_MISMATCH);
static_assert(KVMPFM_STATE_LIMIT == PFM_STREAM_LIMIT);
static_assert(KVMPFM_STATE_NOT_EMPTY == PFM_STREAM_NOT_EMPTY);
static_assert(KVMPFM_STATE_EVENT == PFM_STREAM_EVENT);
static_assert(KVMPFM_STATE_GUEST_MEM == PFM_STREAM_GUEST_MEM);
static_assert(KVMPFM_STATE_COUNTER == PFM_STREAM_COUNTER);

/* the largest stream this VM takes: its limits', within one allocation */
static u32 state_max(struct kvmpfm_vm *vm)
{
	return min_t(size_t, pfm_engine_stream_max(vm->engine), INT_MAX);
}

/* the stream into a new buffer *@buf; @st->size its bytes */
static int get_state(struct kvmpfm_vm *vm, struct kvmpfm_state *st,
		     void **buf)
{
	long n;
	u32 i;

	/*
	 * Wraps the vCPUs took but did not deliver belong in the counts.
	 * Delivered from here, not by their threads, which are all outside
	 * KVM_RUN: the VMM saves with the VM paused, its vCPU threads asleep
	 * in the VMM, so their events are active on no CPU and perf reads
	 * them here, no cross-CPU call. Their return to user mode ran the
	 * task work queued before, so little is left; re-arming a counter
	 * that is calls the CPU its thread last ran on, where no vCPU of
	 * this VM runs.
	 */
	for (i = 0; i < vm->nr_vcpus; i++)
		if (vm->vcpus[i].task)
			kvmpfm_vcpu_sync(&vm->vcpus[i]);
	n = pfm_engine_save(vm->engine, NULL, 0);
	if (n > st->max_size)
		return -E2BIG;
	if (st->size < n) {
		st->size = n;
		return -ENOSPC;
	}
	*buf = kvmpfm_zalloc(n);
	if (!*buf)
		return -ENOMEM;
	n = pfm_engine_save(vm->engine, *buf, n);
	if (n < 0)
		return n;
	st->size = n;
	return 0;
}

/*
 * Messages queued at save may have been signalled on the source after
 * its interrupt controller state was taken: signal once more. The guest
 * reads every context's queue on any vector (a spurious one costs a
 * READ_MSG); an eventfd signalled before its irqfd is attached injects
 * at attach.
 */
static void msgs_count(void *arg, const struct pfm_ctx_view *c)
{
	*(u32 *)arg += c->msgs_queued;
}

static void msgs_counter(void *arg, const struct pfm_ctx_view *c, u16 set,
			 const struct pfm_counter *ctr)
{
}

static const struct pfm_view_ops msgs_view_ops = {
	.context = msgs_count,
	.counter = msgs_counter,	/* the walk calls both */
};

static void notify_queued(struct kvmpfm_vm *vm)
{
	u32 queued = 0, i;

	pfm_engine_view(vm->engine, &msgs_view_ops, &queued);
	for (i = 0; queued && i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].eventfd) {
			kvmpfm_eventfd_signal(vm->vcpus[i].eventfd);
			vm->notifications++;
			return;
		}
	}
}

/* SET_STATE's stream, @st->size bytes, into a new buffer *@buf */
static int set_state_copy(struct kvmpfm_state *st, void **buf)
{
	if (!st->size || st->size > st->max_size) {
		st->reason = st->size ? KVMPFM_STATE_LIMIT :
					KVMPFM_STATE_MALFORMED;
		return st->size ? -E2BIG : -EINVAL;
	}
	*buf = kvmpfm_zalloc(st->size);
	if (!*buf)
		return -ENOMEM;
	if (copy_from_user(*buf, u64_to_user_ptr(st->buf), st->size))
		return -EFAULT;
	return 0;
}

static int set_state(struct kvmpfm_vm *vm, struct kvmpfm_state *st,
		     const void *buf)
{
	struct pfm_stream_error err;
	int ret;

	ret = pfm_engine_restore(vm->engine, buf, st->size, &err);
	st->reason = err.reason;
	st->offset = err.offset;
	if (err.reason != PFM_STREAM_OK) {
		st->ctx_id = err.ctx_id;
		st->set = err.set;
		st->pmd = err.pmd;
	}
	if (!ret)
		notify_queued(vm);
	return ret;
}

/* under vm->lock: the vCPUs held around the stream's save or restore */
static long state_locked(struct kvmpfm_vm *vm, unsigned int cmd,
			 struct kvmpfm_state *st, void **buf)
{
	if (cmd == KVMPFM_GET_STATE && !st->buf) {
		/* a size only: at any time, exact once the vCPUs stopped */
		st->size = min_t(long, pfm_engine_save(vm->engine, NULL, 0),
				 U32_MAX);
		return 0;
	}
	if (!kvmpfm_vcpus_out_of_run(vm))
		return -EBUSY;
	if (cmd == KVMPFM_GET_STATE)
		return get_state(vm, st, buf);
	return set_state(vm, st, *buf);
}

long kvmpfm_state_ioctl(struct kvmpfm_vm *vm, unsigned int cmd,
			void __user *argp)
{
	struct kvmpfm_state st;
	void *buf = NULL;
	long ret;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	if (st.reserved1 || memchr_inv(st.reserved, 0, sizeof(st.reserved)))
		return -EINVAL;
	st.max_size = state_max(vm);
	st.reason = KVMPFM_STATE_OK;
	st.ctx_id = 0;
	st.set = 0;
	st.pmd = 0;
	st.offset = 0;
	ret = cmd == KVMPFM_SET_STATE ? set_state_copy(&st, &buf) : 0;
	if (!ret)
		ret = mutex_lock_killable(&vm->lock);
	if (!ret) {
		ret = state_locked(vm, cmd, &st, &buf);
		mutex_unlock(&vm->lock);
		if (!ret && cmd == KVMPFM_GET_STATE && buf &&
		    copy_to_user(u64_to_user_ptr(st.buf), buf, st.size))
			ret = -EFAULT;
	}
	kvmpfm_free(buf);
	/* the reason and the sizes go back with the error too */
	if (copy_to_user(argp, &st, sizeof(st)))
		return -EFAULT;
	return ret;
}
