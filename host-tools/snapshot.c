// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the module's operator interface (snapshot.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "snapshot.h"

const struct cli_exit snap_exit_status[] = {
	{ SNAP_EXIT_OK, "success; the exporter: stopped by SIGTERM or SIGINT,\n"
			"or --once's scrape succeeded" },
	{ SNAP_EXIT_USAGE, "bad arguments; the exporter: or a web config\n"
			   "that is not right" },
	{ SNAP_EXIT_NO_MODULE, "kvm-perfmon.ko is not loaded (no /dev/kvm-perfmon)" },
	{ SNAP_EXIT_DENIED, "permission denied: not root or CAP_PERFMON, or\n"
			    "no access to /dev/kvm-perfmon" },
	{ SNAP_EXIT_NO_VM, "kvm-perfmon-stat --vm matched no VM" },
	{ SNAP_EXIT_ERROR, "any other error (the exporter: e.g. its address\n"
			   "cannot be listened on)" },
	{ 0, NULL }
};
#include "include/uapi/perfmon2.h"
#include "include/uapi/pv_perfmon.h"

int snap_open(char *err, size_t len)
{
	int fd = open(KVMPFM_DEVICE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		snprintf(err, len, "%s: %s%s", KVMPFM_DEVICE, strerror(errno),
			 errno == ENOENT ? " (is kvm-perfmon.ko loaded?)" : "");
	return fd;
}

static int errno_exit(int e)
{
	return e == EPERM || e == EACCES ? SNAP_EXIT_DENIED : SNAP_EXIT_ERROR;
}

int snap_open_exit(int err)
{
	return err == ENOENT ? SNAP_EXIT_NO_MODULE : errno_exit(err);
}

int snap_usage_try_help(const char *prog)
{
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return SNAP_EXIT_USAGE;
}

int snap_usage_operand(const char *prog, const char *arg)
{
	fprintf(stderr, "%s: unexpected '%s'; try --help\n", prog, arg);
	return SNAP_EXIT_USAGE;
}

/* the ids of the bound VMs; *@nr of them, or an exit code */
static int list_ids(int fd, uint64_t **ids, uint32_t *nr, char *err,
		    size_t len)
{
	struct kvmpfm_vm_list req = { 0 };
	uint32_t room = 0;

	*ids = NULL;
	for (;;) {
		req.nr = room;
		req.ids = (uintptr_t)*ids;
		if (ioctl(fd, KVMPFM_LIST_VMS, &req)) {
			snprintf(err, len, "KVMPFM_LIST_VMS: %s%s",
				 strerror(errno), errno == EPERM ?
				 " (root or CAP_PERFMON only)" : "");
			free(*ids);
			*ids = NULL;
			return errno_exit(errno);
		}
		if (req.nr <= room)
			break;
		room = req.nr + 8;	/* VMs may be bound meanwhile */
		free(*ids);
		*ids = calloc(room, sizeof(**ids));
		if (!*ids) {
			snprintf(err, len, "out of memory");
			return SNAP_EXIT_ERROR;
		}
	}
	*nr = req.nr;
	return 0;
}

static void snap_names(struct snap *s)
{
	const uint8_t *u = s->vm.identity.uuid;
	static const uint8_t zero[16];

	s->vm.identity.name[KVMPFM_NAME_LEN - 1] = '\0';
	if (s->vm.identity.name[0]) {
		s->name = s->vm.identity.name;
	} else {
		snprintf(s->name_buf, sizeof(s->name_buf), "vm%" PRIu64,
			 (uint64_t)s->vm.id);
		s->name = s->name_buf;
	}
	s->uuid[0] = '\0';
	if (memcmp(u, zero, sizeof(zero)))
		snprintf(s->uuid, sizeof(s->uuid),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
			 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
}

/* 0, 1 if the VM is gone, or an exit code */
static int read_one(int fd, uint64_t id, struct snap *s, char *err,
		    size_t len)
{
	struct kvmpfm_snapshot req = { .vm_id = id };
	size_t room = 64 * 1024;
	const struct kvmpfm_snap_vm *vm;

	memset(s, 0, sizeof(*s));
	for (;;) {
		s->buf = malloc(room);
		if (!s->buf) {
			snprintf(err, len, "out of memory");
			return SNAP_EXIT_ERROR;
		}
		req.buf = (uintptr_t)s->buf;
		req.size = room;
		if (!ioctl(fd, KVMPFM_GET_SNAPSHOT, &req))
			break;
		free(s->buf);
		s->buf = NULL;
		if (errno == ENOENT)
			return 1;
		if (errno != ENOSPC) {
			snprintf(err, len, "KVMPFM_GET_SNAPSHOT: %s",
				 strerror(errno));
			return errno_exit(errno);
		}
		room = req.size + 4096;
	}
	s->len = req.size;
	vm = s->buf;
	if (s->len < sizeof(vm->size) || vm->size > s->len) {
		snprintf(err, len, "KVMPFM_GET_SNAPSHOT: a short record");
		return SNAP_EXIT_ERROR;
	}
	memcpy(&s->vm, vm, vm->size < sizeof(s->vm) ? vm->size :
						      sizeof(s->vm));
	snap_names(s);
	return 0;
}

int snap_read_all(int fd, struct snap_set *set, char *err, size_t len)
{
	uint64_t *ids;
	uint32_t nr, i;
	int ret;

	memset(set, 0, sizeof(*set));
	ret = list_ids(fd, &ids, &nr, err, len);
	if (ret)
		return ret;
	set->vms = calloc(nr ? nr : 1, sizeof(*set->vms));
	if (!set->vms) {
		free(ids);
		snprintf(err, len, "out of memory");
		return SNAP_EXIT_ERROR;
	}
	for (i = 0; i < nr; i++) {
		ret = read_one(fd, ids[i], &set->vms[set->nr], err, len);
		if (ret > 1) {
			free(ids);
			snap_set_free(set);
			return ret;
		}
		if (!ret)
			set->nr++;
	}
	free(ids);
	return 0;
}

void snap_set_free(struct snap_set *set)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		free(set->vms[i].buf);
	free(set->vms);
	memset(set, 0, sizeof(*set));
}

const struct snap *snap_find(const struct snap_set *set, const char *key)
{
	const struct snap *s;
	unsigned int i;
	char num[24];

	for (i = 0; i < set->nr; i++) {
		s = &set->vms[i];
		snprintf(num, sizeof(num), "%d", (int)s->vm.pid);
		if (!strcmp(key, s->name) || !strcmp(key, num) ||
		    (s->uuid[0] && !strcasecmp(key, s->uuid)))
			return s;
	}
	return NULL;
}

/*
 * Record @i of a kind: at @off from the start, @size bytes each as the
 * module wrote them, copied into @out of @out_size (zero past them).
 */
static const void *record(const struct snap *s, size_t off, uint32_t size,
			  unsigned int i, void *out, size_t out_size)
{
	const char *p = (const char *)s->buf + off + (size_t)i * size;

	if (off + (size_t)(i + 1) * size > s->len)
		return NULL;
	memset(out, 0, out_size);
	memcpy(out, p, size < out_size ? size : out_size);
	return out;
}

static size_t vcpus_off(const struct snap *s)
{
	return s->vm.size;
}

static size_t ctxs_off(const struct snap *s)
{
	return vcpus_off(s) + (size_t)s->vm.nr_vcpus * s->vm.vcpu_size;
}

static size_t events_off(const struct snap *s)
{
	return ctxs_off(s) + (size_t)s->vm.nr_ctxs * s->vm.ctx_size;
}

/* one record of each kind at a time is enough for the tools */
const struct kvmpfm_snap_vcpu *snap_vcpu(const struct snap *s, unsigned int i)
{
	static struct kvmpfm_snap_vcpu r;

	if (i >= s->vm.nr_vcpus)
		return NULL;
	return record(s, vcpus_off(s), s->vm.vcpu_size, i, &r, sizeof(r));
}

const struct kvmpfm_snap_ctx *snap_ctx(const struct snap *s, unsigned int i)
{
	static struct kvmpfm_snap_ctx r;

	if (i >= s->vm.nr_ctxs)
		return NULL;
	return record(s, ctxs_off(s), s->vm.ctx_size, i, &r, sizeof(r));
}

const struct kvmpfm_snap_event *snap_event(const struct snap *s,
					   unsigned int i)
{
	static struct kvmpfm_snap_event r;

	if (i >= s->vm.nr_events)
		return NULL;
	return record(s, events_off(s), s->vm.event_size, i, &r, sizeof(r));
}

static const char *const call_names[PVPFM_CMD_MAX] = {
	[PVPFM_CMD_CREATE_CONTEXT] = "create_context",
	[PVPFM_CMD_WRITE_PMCS] = "write_pmcs",
	[PVPFM_CMD_WRITE_PMDS] = "write_pmds",
	[PVPFM_CMD_READ_PMDS] = "read_pmds",
	[PVPFM_CMD_LOAD_CONTEXT] = "load_context",
	[PVPFM_CMD_START] = "start",
	[PVPFM_CMD_STOP] = "stop",
	[PVPFM_CMD_RESTART] = "restart",
	[PVPFM_CMD_CREATE_EVTSETS] = "create_evtsets",
	[PVPFM_CMD_GETINFO_EVTSETS] = "getinfo_evtsets",
	[PVPFM_CMD_DELETE_EVTSETS] = "delete_evtsets",
	[PVPFM_CMD_UNLOAD_CONTEXT] = "unload_context",
	[PVPFM_CMD_DESTROY_CONTEXT] = "destroy_context",
	[PVPFM_CMD_SWITCH] = "switch",
	[PVPFM_CMD_SMPL_REGISTER] = "smpl_register",
	[PVPFM_CMD_READ_MSG] = "read_msg",
	[PVPFM_CMD_PMU_INFO] = "pmu_info",
	[PVPFM_CMD_REG_DESC] = "reg_desc",
	[PVPFM_CMD_CTX_STATE] = "ctx_state",
};

const char *snap_call_name(unsigned int cmd)
{
	return cmd < PVPFM_CMD_MAX ? call_names[cmd] : NULL;
}

const char *snap_errno_name(unsigned int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown";
}

const char *snap_personality_name(uint32_t id)
{
	const struct pvpfm_pers_desc *d = pvpfm_pers_desc(id);

	return d ? d->name : "unknown";
}

const char *snap_ctx_state_name(uint32_t state)
{
	switch (state) {
	case KVMPFM_CTX_UNLOADED:
		return "unloaded";
	case KVMPFM_CTX_LOADED:
		return "loaded";
	case KVMPFM_CTX_MASKED:
		return "masked";
	}
	return "unknown";
}

const char *snap_host_event_name(const struct kvmpfm_snap_event *e,
				 char *buf, size_t len)
{
	static const char *const types[] = {
		[PERF_TYPE_HARDWARE] = "hardware",
		[PERF_TYPE_SOFTWARE] = "software",
		[PERF_TYPE_TRACEPOINT] = "tracepoint",
		[PERF_TYPE_HW_CACHE] = "hw_cache",
		[PERF_TYPE_RAW] = "raw",
	};

	if (e->flags & KVMPFM_SNAP_EV_POLLED)
		snprintf(buf, len, "polled");
	else if (e->host_type < sizeof(types) / sizeof(types[0]) &&
		 types[e->host_type])
		snprintf(buf, len, "%s:0x%" PRIx64, types[e->host_type],
			 (uint64_t)e->host_config);
	else
		snprintf(buf, len, "type%u:0x%" PRIx64, e->host_type,
			 (uint64_t)e->host_config);
	return buf;
}

uint64_t snap_refusals(const struct snap *s)
{
	return s->vm.stats.command_errors;
}

/*
 * A register the host cannot count (NOTAVAIL), the operator's filter
 * refused or a VM with KVM's mediated vPMU kept from the PMU stops its
 * call with EINVAL: those calls are shown under their own cause, not
 * under EINVAL. A call that failed with EOPNOTSUPP failed for the
 * mediated vPMU too (a counter could not open; the module gives that
 * errno for nothing else): MEDIATED as well.
 */
void snap_for_each_cause(const struct snap *s, snap_cause_fn *fn, void *arg)
{
	uint64_t n, regs = s->vm.notavail + s->vm.filtered +
			   s->vm.host_mediated;
	uint64_t mediated = s->vm.host_mediated + s->vm.refusals[EOPNOTSUPP];
	unsigned int e;

	if (s->vm.notavail)
		fn("NOTAVAIL", s->vm.notavail, arg);
	if (s->vm.filtered)
		fn("FILTERED", s->vm.filtered, arg);
	if (mediated)
		fn("MEDIATED", mediated, arg);
	for (e = 1; e < KVMPFM_SNAP_ERRNOS; e++) {
		n = s->vm.refusals[e];
		if (e == EINVAL)
			n = n > regs ? n - regs : 0;
		if (e == EOPNOTSUPP)
			n = 0;
		if (n)
			fn(snap_errno_name(e), n, arg);
	}
}

double snap_running_ratio(const struct snap *s)
{
	const struct kvmpfm_snap_event *e;
	uint64_t en = 0, run = 0;
	unsigned int i;

	for (i = 0; (e = snap_event(s, i)); i++) {
		en += e->time_enabled;
		run += e->time_running;
	}
	return en ? (double)run / en : 1.0;
}

struct snap_event_key snap_event_key(const struct kvmpfm_snap_event *e)
{
	return (struct snap_event_key){
		.vcpu = e->vcpu, .ctx_id = e->ctx_id, .set = e->set,
		.pmd = e->pmd, .guest_kind = e->guest_kind,
		.guest_event = e->guest_event, .guest_umask = e->guest_umask,
	};
}

int snap_event_key_cmp(const struct snap_event_key *a,
		       const struct snap_event_key *b)
{
#define CMP_FIELD(f)	if (a->f != b->f) return a->f < b->f ? -1 : 1
	CMP_FIELD(vcpu);
	CMP_FIELD(ctx_id);
	CMP_FIELD(set);
	CMP_FIELD(pmd);
	CMP_FIELD(guest_kind);
	CMP_FIELD(guest_event);
	CMP_FIELD(guest_umask);
#undef CMP_FIELD
	return 0;
}

double snap_interval_running_ratio(const struct snap *s, const struct snap *p)
{
	struct kvmpfm_snap_event now, before;
	const struct kvmpfm_snap_event *e, *b;
	struct snap_event_key key, bkey;
	uint64_t en = 0, run = 0;
	unsigned int i, j;

	for (i = 0; (e = snap_event(s, i)); i++) {
		now = *e;	/* snap_event's record is reused below */
		key = snap_event_key(&now);
		for (j = 0; (b = snap_event(p, j)); j++) {
			bkey = snap_event_key(b);
			if (!snap_event_key_cmp(&key, &bkey))
				break;
		}
		before = b ? *b : (struct kvmpfm_snap_event){ 0 };
		/* a record new in the interval, or whose counters reopened */
		if (!b || now.time_enabled < before.time_enabled ||
		    now.time_running < before.time_running)
			before.time_enabled = before.time_running = 0;
		en += now.time_enabled - before.time_enabled;
		run += now.time_running - before.time_running;
	}
	return en ? (double)run / en : NAN;
}
