/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What hostlib's files share among themselves, not the tests.
 */
#ifndef HOSTLIB_INTERNAL_H
#define HOSTLIB_INTERNAL_H

#include "hostlib.h"

/* run.c: the real-mode snippets of hostlib.h into guest RAM at @mem */
void hl_guest_code_load(uint8_t *mem);
/* cmd.c: v->cb.deliver, a call handed to the vCPU's thread */
int hl_deliver(struct cb_caller *c, struct cb_cmd *cmd);
/*
 * mailbox.c: @v's thread started, bound (unless opts.no_bind_vcpus) and
 * waiting for calls; 0 or -errno (the binding's)
 */
int hl_vcpu_thread_start(struct hl_vcpu *v);

#endif /* HOSTLIB_INTERNAL_H */
