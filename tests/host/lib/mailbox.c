// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, the mailbox: one thread per vCPU that binds itself and then
 * runs the calls other threads hand it (hl_call), and the signal that
 * kicks it out of KVM_RUN (hostlib.h, "calls on vCPU threads").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "hostlib.h"
#include "internal.h"

static __thread struct kvm_run *cur_run;

static void kick_handler(int sig)
{
	(void)sig;
	if (cur_run)
		cur_run->immediate_exit = 1;
}

void hl_init(void)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: KVM_RUN returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- vCPU threads ----------------------------------------------------------- */

bool hl_on_vcpu(const struct hl_vcpu *v)
{
	return v->tid && v->tid == (pid_t)syscall(SYS_gettid);
}

int hl_vcpu_bind(struct hl_vcpu *v)
{
	struct hl_vm *vm = v->vm;
	struct kvmpfm_cmd_block cb = { .vcpu = v->index, .gpa = v->cmd_gpa };
	struct kvmpfm_eventfd ef = { .vcpu = v->index, .fd = v->efd };

	if (ioctl(vm->pfm_fd, KVMPFM_BIND_VCPU, (unsigned long)v->index))
		return -errno;
	if (ioctl(vm->pfm_fd, KVMPFM_SET_CMD_BLOCK, &cb))
		return -errno;
	if (ioctl(vm->pfm_fd, KVMPFM_SET_EVENTFD, &ef))
		return -errno;
	return 0;
}

int hl_vcpu_bind_fn(struct hl_vcpu *v, void *unused)
{
	(void)unused;
	return hl_vcpu_bind(v);
}

/*
 * Every thread that runs a vCPU on host CPU 0 (HL_PIN_VCPUS=N: CPU N,
 * =none: no pinning). The rig's L1 (multi-threaded TCG, 2 CPUs, kvm-amd
 * nested) corrupts its own memory when guests run on both of its CPUs,
 * with or without kvm-perfmon (tests/host/README); with -accel
 * tcg,thread=single or -smp 1 it does not, and no pinning is needed. The
 * module's cross-CPU work (IPIs from its work items) is exercised either
 * way.
 */
static void pin_vcpu_thread(void)
{
	const char *pin = getenv("HL_PIN_VCPUS");

	if (!pin)
		pin = "0";
	if (strcmp(pin, "none"))
		hl_pin_cpu(atoi(pin));
}

struct new_thread {
	int (*fn)(void *);
	void *arg;
	int ret;
};

static void *new_thread_main(void *p)
{
	struct new_thread *t = p;

	pin_vcpu_thread();
	t->ret = t->fn(t->arg);
	return NULL;
}

int hl_on_new_thread(int (*fn)(void *), void *arg)
{
	struct new_thread t = { fn, arg, 0 };
	pthread_t th;

	if (pthread_create(&th, NULL, new_thread_main, &t))
		return -EAGAIN;
	pthread_join(th, NULL);
	return t.ret;
}

static void *vcpu_thread(void *p)
{
	struct hl_vcpu *v = p;

	v->tid = (pid_t)syscall(SYS_gettid);
	cur_run = v->run;
	pin_vcpu_thread();
	if (v->vm->pfm_fd >= 0 && !v->vm->opts.no_bind_vcpus)
		v->bind_err = hl_vcpu_bind(v);

	pthread_mutex_lock(&v->mu);
	v->state = 2;		/* started: hl_vm_create waits for it */
	pthread_cond_broadcast(&v->cv);
	for (;;) {
		while (v->state != 1 && !v->quit)
			pthread_cond_wait(&v->cv, &v->mu);
		if (v->state != 1 && v->quit)
			break;
		pthread_mutex_unlock(&v->mu);
		v->ret = v->fn(v, v->arg);
		pthread_mutex_lock(&v->mu);
		v->state = 2;
		pthread_cond_broadcast(&v->cv);
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

void hl_call_async(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *),
		   void *arg)
{
	pthread_mutex_lock(&v->mu);
	while (v->state == 1)
		pthread_cond_wait(&v->cv, &v->mu);
	v->fn = fn;
	v->arg = arg;
	v->state = 1;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
}

bool hl_call_done(struct hl_vcpu *v)
{
	bool done;

	pthread_mutex_lock(&v->mu);
	done = v->state != 1;
	pthread_mutex_unlock(&v->mu);
	return done;
}

int hl_call_wait(struct hl_vcpu *v)
{
	int ret;

	pthread_mutex_lock(&v->mu);
	while (v->state == 1)
		pthread_cond_wait(&v->cv, &v->mu);
	ret = v->ret;
	pthread_mutex_unlock(&v->mu);
	return ret;
}

int hl_call(struct hl_vcpu *v, int (*fn)(struct hl_vcpu *, void *), void *arg)
{
	if (hl_on_vcpu(v))
		return fn(v, arg);
	hl_call_async(v, fn, arg);
	return hl_call_wait(v);
}

int hl_kick_and_wait(struct hl_vcpu *v)
{
	struct timespec ts = { 0, 2000000 };

	v->stop = 1;
	while (!hl_call_done(v)) {
		pthread_kill(v->thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return hl_call_wait(v);
}

int hl_vcpu_thread_start(struct hl_vcpu *v)
{
	if (pthread_create(&v->thread, NULL, vcpu_thread, v))
		return -EAGAIN;
	pthread_mutex_lock(&v->mu);
	while (v->state != 2)
		pthread_cond_wait(&v->cv, &v->mu);
	v->state = 0;
	pthread_mutex_unlock(&v->mu);
	return v->bind_err;
}

void hl_vm_stop_threads(struct hl_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		struct hl_vcpu *v = &vm->vcpus[i];

		if (!v->tid)
			continue;
		pthread_mutex_lock(&v->mu);
		v->quit = true;
		pthread_cond_broadcast(&v->cv);
		pthread_mutex_unlock(&v->mu);
		pthread_join(v->thread, NULL);
		v->tid = 0;
	}
}
