// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, module stats: the module's and a VM's counters, and the leak
 * check after a teardown (hostlib.h, "module stats").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "hostlib.h"

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

long hl_param_read(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int hl_param_write(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

int hl_list_vms(int fd, uint64_t *ids, uint32_t room)
{
	struct kvmpfm_vm_list l = { .nr = room, .ids = (uintptr_t)ids };
	int ret = HL_IOCTL(fd, KVMPFM_LIST_VMS, &l);

	return ret ? ret : (int)l.nr;
}

int hl_only_vm_snap(int fd, struct kvmpfm_snap_vm *out)
{
	static union {
		struct kvmpfm_snap_vm vm;
		char room[64 * 1024];
	} snap;
	uint32_t size = sizeof(snap);
	uint64_t id;
	int ret = hl_list_vms(fd, &id, 1);

	if (ret != 1)
		return ret < 0 ? ret : -ENOENT;
	ret = hl_snapshot(fd, id, &snap, &size);
	if (!ret)
		*out = snap.vm;
	return ret;
}

int hl_snapshot(int fd, uint64_t id, void *buf, uint32_t *size)
{
	struct kvmpfm_snapshot req = {
		.vm_id = id, .buf = (uintptr_t)buf, .size = *size,
	};
	int ret = HL_IOCTL(fd, KVMPFM_GET_SNAPSHOT, &req);

	*size = req.size;
	return ret;
}

/*
 * Reading the stats takes an open /dev/kvm-perfmon, and the module counts
 * that open file's own state in `allocations` (kvmpfm_open() allocates
 * through kvmpfm_zalloc()). Measure what one open file costs (0 if the
 * module stops counting it) with a second open, and expect exactly the
 * reader's own share: a leak of one object is still seen. The open and
 * the close must agree: a previous program's file released meanwhile
 * (its last reference going a little after its exit) would otherwise
 * make one open file cost nothing, and every later check fail.
 */
static int own_file_allocs = -1;

static int stats_baseline(int fd)
{
	struct kvmpfm_module_stats a, b, c;
	struct timespec ts = { 0, 10000000 };
	int fd2, tries;

	if (own_file_allocs >= 0)
		return 0;
	for (tries = 0; tries < 100; tries++) {
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
		if (ioctl(fd, KVMPFM_GET_MODULE_STATS, &c))
			return -errno;
		if (b.allocations - a.allocations == b.allocations - c.allocations)
			break;
		nanosleep(&ts, NULL);
	}
	own_file_allocs = (int)(b.allocations - a.allocations);
	/* never the same twice in a second: assume none */
	if (tries == 100 || own_file_allocs < 0 || own_file_allocs > 1)
		own_file_allocs = 0;
	if (own_file_allocs)
		t_note("note: the module counts each open %s in allocations "
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

bool hl_check_module_idle(const char *name)
{
	char why[256];
	bool ok = hl_module_idle(2000, why, sizeof(why));

	return t_check(ok, name, "module stats not zero after teardown: %s", why);
}
