// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, the guest running: the real-mode snippets, the registers to
 * start one, and the KVM_RUN loop (hostlib.h, "the guest running").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>

#include "hostlib.h"
#include "internal.h"

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

void hl_guest_code_load(uint8_t *mem)
{
	memcpy(mem + HL_CODE_IO, code_io, sizeof(code_io));
	memcpy(mem + HL_CODE_TOUCH, code_touch, sizeof(code_touch));
	memcpy(mem + HL_CODE_SPIN, code_spin, sizeof(code_spin));
	memcpy(mem + HL_CODE_HLT, code_hlt, sizeof(code_hlt));
}

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

/* how run_loop() ended, short of an error */
enum run_end { RUN_DONE, RUN_KICKED };

/*
 * The one KVM_RUN loop: until the guest's OUT to HL_PORT_DONE, an exit
 * it does not expect (-EIO), a failed KVM_RUN (-errno) or, if
 * @kickable, v->stop (hl_kick_and_wait). Counts the exits userspace saw;
 * a signal's EINTR is one of them and the loop goes on.
 */
static int run_loop(struct hl_vcpu *v, bool kickable)
{
	struct kvm_run *run = v->run;

	v->exits_io = v->exits_hlt = v->exits_intr = v->exits_other = 0;
	for (;;) {
		run->immediate_exit = 0;
		if (kickable && v->stop)
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
				return RUN_DONE;
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
			fprintf(stderr, "hostlib: vCPU %d: exit reason %u\n",
				v->index, run->exit_reason);
			return -EIO;
		}
	}
	v->stop = 0;
	run->immediate_exit = 0;
	return RUN_KICKED;
}

int hl_run_to_done(struct hl_vcpu *v)
{
	int ret = run_loop(v, false);

	return ret < 0 ? ret : 0;
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
	int ret = run_loop(v, true);

	return ret < 0 ? ret : ret == RUN_DONE;
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
		finished = hl_call_done(v);
		if (finished)
			break;
		nanosleep(&tick, NULL);
	}
	t = hl_mono_ns() - t0;
	ret = finished ? hl_call_wait(v) : hl_kick_and_wait(v);
	*done = ret == 1;
	return t;
}
