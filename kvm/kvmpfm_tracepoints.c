// SPDX-License-Identifier: GPL-2.0
/*
 * The host tracepoints behind virtual PMDs: KVM's kvm_exit,
 * kvm_vcpu_wakeup and kvm_page_fault, looked up by name, held while any
 * VM is bound, and kept registered between the events that count them.
 * Counting them is event translation's (kvmpfm_event.c): this file only
 * holds them and says which perf event counts one.
 *
 * Locking: the host-wide set under its own mutex, taken at bind and
 * release only, never with vm->lock held. A VM's copies (vm->tp_*) are
 * written at bind before its engine exists and at release after its
 * counters are closed; between the two they are read under vm->lock.
 */
#include <linux/trace_events.h>
#include "kvmpfm.h"

int kvmpfm_tracepoint_attr(struct trace_event_file *file,
			   struct perf_event_attr *attr)
{
	if (IS_ERR_OR_NULL(file))
		return -ENOENT;
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = file->event_call->event.type;
	return 0;
}

/*
 * The host tracepoints backing virtual PMDs, and one disabled event per
 * tracepoint that keeps its probe registered, so that set switches and
 * context switches that close the last counting event do not unregister
 * it (code patching and an RCU grace period each time). One set for the
 * host, held while any VM is bound: not one per binding.
 */
static struct {
	struct mutex lock;
	unsigned int users;		/* bound VMs; the rest under @lock */
	struct trace_event_file *exit, *wakeup, *page_fault;
	struct perf_event *keepers[3];
} tracepoints = { .lock = __MUTEX_INITIALIZER(tracepoints.lock) };

static struct perf_event *tracepoint_keeper(struct trace_event_file *file)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	struct perf_event *event;

	if (kvmpfm_tracepoint_attr(file, &attr))
		return NULL;
	/* the module's, not a VM's: not in the counter count */
	event = perf_event_create_kernel_counter(&attr, 0, NULL, NULL, NULL);
	return IS_ERR(event) ? NULL : event;
}

static void tracepoint_put(struct trace_event_file **file)
{
	if (!IS_ERR_OR_NULL(*file))
		trace_put_event_file(*file);
	*file = NULL;
}

/* at bind: the host's tracepoints, looked up by the first VM bound */
void kvmpfm_tracepoints_get(struct kvmpfm_vm *vm)
{
	mutex_lock(&tracepoints.lock);
	if (!tracepoints.users++) {
		/* missing ones only make their virtual PMDs unavailable */
		tracepoints.exit = trace_get_event_file(NULL, "kvm", "kvm_exit");
		tracepoints.wakeup = trace_get_event_file(NULL, "kvm",
							  "kvm_vcpu_wakeup");
		tracepoints.page_fault = trace_get_event_file(NULL, "kvm",
							      "kvm_page_fault");
		tracepoints.keepers[0] = tracepoint_keeper(tracepoints.exit);
		tracepoints.keepers[1] = tracepoint_keeper(tracepoints.wakeup);
		tracepoints.keepers[2] =
			tracepoint_keeper(tracepoints.page_fault);
	}
	vm->tp_exit = tracepoints.exit;
	vm->tp_wakeup = tracepoints.wakeup;
	vm->tp_page_fault = tracepoints.page_fault;
	vm->tracepoints_held = true;
	mutex_unlock(&tracepoints.lock);
}

/* at release, once @vm's counters are closed; released with the last VM */
void kvmpfm_tracepoints_put(struct kvmpfm_vm *vm)
{
	unsigned int i;

	if (!vm->tracepoints_held)
		return;
	vm->tracepoints_held = false;
	vm->tp_exit = NULL;
	vm->tp_wakeup = NULL;
	vm->tp_page_fault = NULL;
	mutex_lock(&tracepoints.lock);
	if (!--tracepoints.users) {
		for (i = 0; i < ARRAY_SIZE(tracepoints.keepers); i++) {
			if (tracepoints.keepers[i])
				perf_event_release_kernel(tracepoints.keepers[i]);
			tracepoints.keepers[i] = NULL;
		}
		tracepoint_put(&tracepoints.exit);
		tracepoint_put(&tracepoints.wakeup);
		tracepoint_put(&tracepoints.page_fault);
	}
	mutex_unlock(&tracepoints.lock);
}
