/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operator's view of kvm-perfmon, for host tools: every bound VM's
 * snapshot from /dev/kvm-perfmon (KVMPFM_LIST_VMS, KVMPFM_GET_SNAPSHOT,
 * include/uapi/kvm_perfmon.h), and the names that go with its numbers.
 *
 * A snapshot's records are read through the accessors, which honour the
 * record sizes the module gave: a newer module's longer records are read
 * as far as this header knows them.
 */
#ifndef HOST_TOOLS_SNAPSHOT_H
#define HOST_TOOLS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "include/uapi/kvm_perfmon.h"

struct snap {
	struct kvmpfm_snap_vm vm;	/* copied: zero past the module's */
	void *buf;			/* the records as the module wrote them */
	size_t len;
	const char *name;		/* identity.name, or "vm<id>" */
	char name_buf[32];
	char uuid[37];			/* "" when unset */
};

struct snap_set {
	struct snap *vms;
	unsigned int nr;
};

/* Exit codes shared by the tools: snap_exit_status[] says what each means */
enum {
	SNAP_EXIT_OK = 0,
	SNAP_EXIT_USAGE = 1,		/* bad argument */
	SNAP_EXIT_NO_MODULE = 2,	/* no /dev/kvm-perfmon */
	SNAP_EXIT_DENIED = 3,		/* not root or CAP_PERFMON */
	SNAP_EXIT_NO_VM = 4,		/* --vm matched nothing */
	SNAP_EXIT_ERROR = 5,		/* anything else */
};

/* their meanings, for the tools' --help and man pages */
extern const struct cli_exit snap_exit_status[];

/* what the tools' descriptions (struct cli_program) share */
#define SNAP_CLI_COMMON							\
	.man_section = 8,						\
	.synopsis = "[OPTION]...",					\
	.exits = snap_exit_status,					\
	.version = KVMPFM_VERSION
/* the first of their FILES */
#define SNAP_CLI_FILE_DEVICE						\
	"= /dev/kvm-perfmon\n"						\
	"the module's device node, read with the operator's ioctls\n"	\
	"(root:kvm 0660 with the package's udev rule)"

/* the usage errors both tools answer alike; each returns SNAP_EXIT_USAGE */
int snap_usage_try_help(const char *prog);
/* @arg, an operand neither tool takes */
int snap_usage_operand(const char *prog, const char *arg);

/* opens the device; -1 with errno and a message in @err[@len] */
int snap_open(char *err, size_t len);
/* the exit code for snap_open's failure with @err (its errno) */
int snap_open_exit(int err);

/*
 * Every bound VM's snapshot, in bind order. 0, or an exit code above with
 * a message in @err. VMs that go away while they are read are left out.
 */
int snap_read_all(int fd, struct snap_set *set, char *err, size_t len);
void snap_set_free(struct snap_set *set);

/* the VM @key names: its name, its VMM's pid, its UUID or its id */
const struct snap *snap_find(const struct snap_set *set, const char *key);

const struct kvmpfm_snap_vcpu *snap_vcpu(const struct snap *s, unsigned int i);
const struct kvmpfm_snap_ctx *snap_ctx(const struct snap *s, unsigned int i);
const struct kvmpfm_snap_event *snap_event(const struct snap *s,
					   unsigned int i);

/*
 * A record's identity across readings: the same event of the same PMD
 * of one context. Ordered by snap_event_key_cmp (0: the same record).
 */
struct snap_event_key {
	uint32_t vcpu;
	uint32_t ctx_id;
	uint16_t set;
	uint16_t pmd;
	uint32_t guest_kind;
	uint16_t guest_event;
	uint8_t guest_umask;
};

struct snap_event_key snap_event_key(const struct kvmpfm_snap_event *e);
int snap_event_key_cmp(const struct snap_event_key *a,
		       const struct snap_event_key *b);

/* names */
const char *snap_call_name(unsigned int cmd);	/* "write_pmcs"; NULL */
const char *snap_errno_name(unsigned int err);	/* "EBUSY" */
const char *snap_personality_name(uint32_t id);
const char *snap_ctx_state_name(uint32_t state);
/* "hardware cpu-cycles", "software 0x1", "tracepoint", "polled" */
const char *snap_host_event_name(const struct kvmpfm_snap_event *e,
				 char *buf, size_t len);

/* sums over a VM */
uint64_t snap_refusals(const struct snap *s);	/* failed calls */
/*
 * Failed calls by cause, each non-zero one: "NOTAVAIL" (the host cannot
 * count the event), "FILTERED" (the operator's filter), "MEDIATED" (a VM
 * with KVM's mediated vPMU holds the host's PMU), then by errno
 * ("EINVAL", "EBUSY", ...). The causes add up to snap_refusals().
 */
typedef void snap_cause_fn(const char *cause, uint64_t n, void *arg);
void snap_for_each_cause(const struct snap *s, snap_cause_fn *fn, void *arg);
/* host running/enabled time over the VM's events; 1 when none ran */
double snap_running_ratio(const struct snap *s);
/*
 * The same over the interval from @p, a reading of the same VM before:
 * the time the records gained since (a record new since, or whose
 * counters reopened, all of its time). NAN when none was enabled.
 */
double snap_interval_running_ratio(const struct snap *s, const struct snap *p);

#endif /* HOST_TOOLS_SNAPSHOT_H */
