// SPDX-License-Identifier: GPL-2.0
/*
 * Per-context message queue: a FIFO of PFM_MSGQ_DEPTH messages.
 *
 * When it is full a new message is dropped (and counted in the engine's
 * messages_lost): the messages already queued, which the guest has not
 * read yet, are the ones worth keeping, and a masked context produces no
 * further overflow messages until it is restarted anyway.
 */
#include "pfm_priv.h"

void pfm_msg_post(struct pfm_engine *e, struct pfm_context *ctx,
		  const pfarg_msg_t *msg)
{
	if (ctx->msg_count == PFM_MSGQ_DEPTH) {
		e->stats.messages_lost++;
		return;
	}
	ctx->msgq[(ctx->msg_head + ctx->msg_count) % PFM_MSGQ_DEPTH] = *msg;
	ctx->msg_count++;
	e->stats.messages++;
	e->ops->notify(e->be, ctx->id);
}

bool pfm_msg_pop(struct pfm_context *ctx, pfarg_msg_t *msg)
{
	if (!ctx->msg_count)
		return false;
	*msg = ctx->msgq[ctx->msg_head];
	ctx->msg_head = (ctx->msg_head + 1) % PFM_MSGQ_DEPTH;
	ctx->msg_count--;
	return true;
}

int pfm_cmd_read_msg(struct pfm_cmd_args *a)
{
	return pfm_msg_pop(a->ctx, a->arg) ? 0 : -EAGAIN;
}
