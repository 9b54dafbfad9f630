/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The input format of fuzz_cmd (shared with gen_corpus, which writes the
 * seed corpus in it). An input is:
 *
 *   u8 personality, u8 width index, u8 vCPUs    the VM
 *   then operations, each an opcode byte (op % FZ_OP_COUNT) and its bytes:
 *
 *   FZ_OP_RAW     u8 vcpu, u8 flags, 32 bytes header, u16 arg length,
 *                 arg bytes: an arbitrary command block; flags bit 0: the
 *                 header's ctx_id picks a known context
 *   FZ_OP_CMD     u8 vcpu, u8 cmd, u8 ctx pick, then the command's
 *                 parameters (see fuzz_cmd.c: one small byte each)
 *   FZ_OP_EVENTS  u8 vcpu, u8 event, u16 n, u8 scale
 *   FZ_OP_RUN     u16 ns / 64
 *   FZ_OP_RATE    u8 event, u8 events per us
 *   FZ_OP_OVFL    u8 vcpu, u8 PMD bits (a spurious or late interrupt)
 *   FZ_OP_FAIL    u8 kind, u8 n (allocation / counter / guest write failure)
 *   FZ_OP_WHERE   u8 vcpu, u16 ip, u8 tid
 *
 * Missing bytes read as zero, so every input is valid.
 */
#ifndef _FUZZ_FORMAT_H
#define _FUZZ_FORMAT_H

enum fz_op {
	FZ_OP_RAW,
	FZ_OP_CMD,
	FZ_OP_EVENTS,
	FZ_OP_RUN,
	FZ_OP_RATE,
	FZ_OP_OVFL,
	FZ_OP_FAIL,
	FZ_OP_WHERE,
	FZ_OP_COUNT
};

/* a ctx pick byte >= this is a raw, probably unknown, context id */
#define FZ_CTX_RAW		0xf0
/* FZ_OP_CMD command bytes are taken modulo this, plus one */
#define FZ_CMDS			18

/* events the fuzzer drives (index in its table) */
#define FZ_EV_A			0	/* GENERIC 0x76 */
#define FZ_EV_B			1	/* GENERIC 0xc0 */
#define FZ_EV_REFUSED		2	/* GENERIC 0xff, refused by the sim */
#define FZ_EV_FIXED0		3
#define FZ_EV_VM_EXITS		4
#define FZ_EV_RUN_NS		5
#define FZ_EV_COUNT		6

/* PMC value kinds in FZ_OP_CMD WRITE_PMCS */
#define FZ_PMC_EV(ev)		(ev)		/* EN|INT|USR|OS | event */
#define FZ_PMC_OFF		0x10		/* the default value */
#define FZ_PMC_RSVD		0x20		/* a reserved bit set */
#define FZ_PMC_RAW		0x30		/* 8 raw bytes follow */

#endif /* _FUZZ_FORMAT_H */
