// SPDX-License-Identifier: GPL-2.0
/*
 * workload: the program `make run` profiles with pfmon. A mix of CPU work
 * and system calls in a few named hot functions, run in turns of 20 ms
 * for SECONDS (default 2) so that every phase lands in every event set:
 *
 *   crunch_primes   trial division (CPU, branches)
 *   hash_buffer     FNV-1a over 64 KiB (CPU, loads)
 *   syscall_storm   getppid() and 1-byte writes to /dev/null (syscalls)
 *   trap_cpuid      CPUID: one VM exit each (a hypervisor event)
 *   nap             short sleeps (HLT exits when the vCPU idles)
 *
 *   workload [SECONDS]
 *   workload --tasks N
 *   workload --threads N
 *   workload --jit SECONDS
 *
 * --tasks N: pfmon --follow-*'s test. Three tasks each trap a known
 * number of times (CPUID: one VM exit each): the main thread N, a thread
 * 2N, a forked process 3N, and print their tids and counts.
 * --threads N: following at scale: N threads, THREADS_AT_ONCE at a time,
 * each trapping THREAD_CPUIDS times.
 * --jit SECONDS: code made at run time, as a JIT compiler makes it (a
 * loop copied into an anonymous executable mapping), named in
 * /tmp/perf-PID.map as perf's JIT convention has it: jitted_spin.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS	20000000ULL
#define THREADS_AT_ONCE	8
#define THREAD_CPUIDS	100

static volatile uint64_t sink;
static unsigned char buf[64 * 1024];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static void crunch_primes(uint64_t end)
{
	static uint32_t n = 3;
	uint64_t found = 0;

	while (now_ns() < end) {
		for (int k = 0; k < 200; k++, n += 2) {
			uint32_t d = 3;

			while (d * d <= n && n % d)
				d += 2;
			found += d * d > n;
			if (n > 2000000)
				n = 3;
		}
	}
	sink += found;
}

__attribute__((noinline)) static void hash_buffer(uint64_t end)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (now_ns() < end)
		for (size_t i = 0; i < sizeof(buf); i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	sink += h;
}

__attribute__((noinline)) static void syscall_storm(uint64_t end, int fd)
{
	while (now_ns() < end)
		for (int i = 0; i < 50; i++) {
			sink += getppid();
			if (write(fd, buf, 1) < 0)
				sink++;
		}
}

__attribute__((noinline)) static void trap_cpuid(uint64_t end)
{
	unsigned int a, b, c, d;

	while (now_ns() < end)
		for (int i = 0; i < 20; i++) {
			a = 0;
			c = 0;
			__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
			sink += b;
		}
}

__attribute__((noinline)) static void nap(uint64_t end)
{
	struct timespec ts = { 0, 1000000 };

	while (now_ns() < end)
		nanosleep(&ts, NULL);
}

static void cpuids(unsigned long n)
{
	unsigned int a, b, c, d;

	for (unsigned long i = 0; i < n; i++) {
		a = 0;
		c = 0;
		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
		sink += b;
	}
}

/* @n CPUIDs, then this task's line */
__attribute__((noinline)) static void traps(const char *who, unsigned long n)
{
	cpuids(n);
	printf("workload: %s tid %ld did %lu CPUIDs\n", who,
	       (long)syscall(SYS_gettid), n);
	fflush(stdout);
}

static unsigned long tasks_n;

static void *thread_main(void *arg)
{
	(void)arg;
	traps("thread", 2 * tasks_n);
	return NULL;
}

static int tasks(unsigned long n)
{
	pthread_t th;
	pid_t pid;
	int st, err;

	tasks_n = n;
	err = pthread_create(&th, NULL, thread_main, NULL);
	if (err) {
		fprintf(stderr, "workload: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(th, NULL);
	pid = fork();
	if (pid < 0) {
		perror("workload: fork");
		return 1;
	}
	if (pid == 0) {
		traps("child", 3 * n);
		_exit(0);
	}
	traps("main", n);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}

static void *short_thread(void *arg)
{
	(void)arg;
	cpuids(THREAD_CPUIDS);
	return NULL;
}

static int threads(unsigned long n)
{
	pthread_t th[THREADS_AT_ONCE];
	unsigned long done = 0;

	while (done < n) {
		unsigned long k = n - done < THREADS_AT_ONCE ? n - done :
			THREADS_AT_ONCE;

		for (unsigned long i = 0; i < k; i++) {
			int err = pthread_create(&th[i], NULL, short_thread, NULL);

			if (err) {
				fprintf(stderr, "workload: pthread_create: %s\n",
					strerror(err));
				return 1;
			}
		}
		for (unsigned long i = 0; i < k; i++)
			pthread_join(th[i], NULL);
		done += k;
	}
	printf("workload: %lu threads did %lu CPUIDs\n", n, n * THREAD_CPUIDS);
	return 0;
}

static int jit(double secs)
{
	/* mov $100000, %ecx; 1: dec %ecx; jnz 1b; ret */
	static const unsigned char spin[] = {
		0xb9, 0xa0, 0x86, 0x01, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
	};
	uint64_t stop = now_ns() + (uint64_t)(secs * 1e9);
	unsigned long calls = 0;
	char path[64];
	void (*fn)(void);
	FILE *map;
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("workload: mmap");
		return 1;
	}
	memcpy(p, spin, sizeof(spin));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map || fprintf(map, "%lx %zx jitted_spin\n", (unsigned long)p,
			    sizeof(spin)) < 0 || fclose(map)) {
		perror(path);
		return 1;
	}
	fn = (void (*)(void))p;
	while (now_ns() < stop) {
		fn();
		calls++;
	}
	printf("workload: jitted_spin at %p called %lu times\n", p, calls);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: workload [SECONDS]   (default 2, above 0)\n"
		"       workload --tasks N     (N CPUIDs, a thread 2N, a child 3N)\n"
		"       workload --threads N   (N threads, %d at a time, %d CPUIDs each)\n"
		"       workload --jit SECONDS (a loop made at run time, in /tmp/perf-PID.map)\n",
		THREADS_AT_ONCE, THREAD_CPUIDS);
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 2.0;
	uint64_t stop, t;
	int fd;
	unsigned int phase = 0;
	char *rest;

	if (argc == 3 && (!strcmp(argv[1], "--tasks") ||
			  !strcmp(argv[1], "--threads"))) {
		unsigned long n;

		errno = 0;
		n = strtoul(argv[2], &rest, 10);
		if (errno || *rest || !n || n > 100000000 || argv[2][0] == '-')
			usage();
		return strcmp(argv[1], "--tasks") ? threads(n) : tasks(n);
	}
	if (argc == 3 && !strcmp(argv[1], "--jit")) {
		secs = strtod(argv[2], &rest);
		if (*rest || rest == argv[2] || !(secs > 0) || secs > 86400)
			usage();
		return jit(secs);
	}
	if (argc > 2)
		usage();
	if (argc == 2) {
		secs = strtod(argv[1], &rest);
		if (*rest || rest == argv[1] || !(secs > 0) || secs > 86400)
			usage();
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0) {
		perror("workload: /dev/null");
		return 1;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131);
	stop = now_ns() + (uint64_t)(secs * 1e9);
	while ((t = now_ns()) < stop) {
		uint64_t end = t + SLICE_NS;

		switch (phase++ % 5) {
		case 0: crunch_primes(end); break;
		case 1: hash_buffer(end); break;
		case 2: syscall_storm(end, fd); break;
		case 3: trap_cpuid(end); break;
		default: nap(end); break;
		}
	}
	printf("workload: %.1f s, %u slices of 20 ms (checksum %llx)\n", secs,
	       phase, (unsigned long long)(sink & 0xffff));
	close(fd);
	return 0;
}
