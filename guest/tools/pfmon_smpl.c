// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's sampling (--smpl-period): every context of the session (the
 * command's first thread, each followed task, an attached task, each
 * CPU) samples into the default format's buffer, mmap()ed and drained at
 * each full buffer's notification; one profile of them all, resolved by
 * pfmon_syms.c; the raw samples kept with --smpl-outfile and resolved
 * later by --report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>

#include "pfmon.h"

/*
 * --smpl-outfile: a text file, for pfmon --report to resolve later (the
 * files of the maps must still be there; kernel IPs take the
 * /proc/kallsyms of where --report runs, so the same guest kernel):
 *
 *   pfmon-samples 2
 *   target WHAT / event NAME / period N
 *   entry tid=T pid=P ip=0x.. tstamp=N cpu=C set=S ovfl_pmd=D last_reset=0x..
 *   ...                        (every entry of the sampling buffers, raw)
 *   space TGID EXE             (then that process's files' build-ids:)
 *   buildid HEX PATH
 *   ...                        (then its last /proc/TGID/maps)
 *   ...                        (a space for each sampled process)
 *
 * Version 1 (one process) had "exe PATH" for target and one "maps" line
 * for its only space; --report reads it too.
 */
#define SMPL_FILE_MAGIC		"pfmon-samples 2"
#define SMPL_FILE_MAGIC_V1	"pfmon-samples 1"

static FILE *smpl_file;
static char *smpl_target;	/* what the profile is of */
static uint64_t total_samples, total_fills, total_lost;

static void hit(const pfm_dfl_smpl_entry_t *ent)
{
	total_samples++;
	syms_hit((pid_t)ent->tgid, (pid_t)ent->pid, ent->cpu, ent->tstamp,
		 ent->ip);
	if (smpl_file)
		fprintf(smpl_file, "entry tid=%u pid=%u ip=%#llx tstamp=%llu cpu=%u set=%u ovfl_pmd=%u last_reset=%#llx\n",
			ent->pid, ent->tgid, (unsigned long long)ent->ip,
			(unsigned long long)ent->tstamp, ent->cpu, ent->set,
			ent->ovfl_pmd, (unsigned long long)ent->last_reset_val);
}

void smpl_begin(const char *target)
{
	smpl_target = strdup(target);
	if (!smpl_target)
		die("out of memory");
	if (!opts.smpl_outfile)
		return;
	smpl_file = fopen(opts.smpl_outfile, "we");
	if (!smpl_file)
		die("--smpl-outfile %s: %s", opts.smpl_outfile, strerror(errno));
	fprintf(smpl_file, SMPL_FILE_MAGIC "\ntarget %s\nevent %s\nperiod %llu\n",
		target, sets[0].ev[0].name, (unsigned long long)opts.smpl_period);
}

/*
 * The entries written since the last drain. The host writes the entries
 * of an overflow before it updates the header's count, so every entry
 * below the count is whole while sampling goes on.
 */
static void drain(struct smpl_ctx *sc)
{
	const volatile pfm_dfl_smpl_hdr_t *hdr = sc->buf;
	const unsigned char *start = (const unsigned char *)sc->buf +
				     sizeof(pfm_dfl_smpl_hdr_t);
	uint64_t count = hdr->hdr_count;
	uint64_t room = (opts.smpl_buf_size - sizeof(pfm_dfl_smpl_hdr_t)) /
			sizeof(pfm_dfl_smpl_entry_t);

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	sc->lost = hdr->hdr_reserved[PVPFM_DFL_HDR_LOST];
	if (count > room)
		count = room;
	/* no PMDs recorded with an entry: each one the same size */
	for (; sc->taken < count; sc->taken++) {
		hit((const void *)(start + sc->taken *
				   sizeof(pfm_dfl_smpl_entry_t)));
		sc->samples++;
	}
}

void smpl_poll(struct smpl_ctx *sc)
{
	if (sc->buf)
		drain(sc);
}

void smpl_map(struct smpl_ctx *sc, int fd)
{
	void *buf = mmap(NULL, opts.smpl_buf_size, PROT_READ, MAP_PRIVATE, fd, 0);

	if (buf == MAP_FAILED)
		die("mapping the sampling buffer: %s", strerror(errno));
	*sc = (struct smpl_ctx){ .fd = fd, .buf = buf };
}

bool smpl_msg(struct smpl_ctx *sc)
{
	pfarg_msg_t msg;

	if (read(sc->fd, &msg, sizeof(msg)) != sizeof(msg))
		return false;
	if (msg.type == PFM_MSG_OVFL) {
		/* buffer full: take it, restart (empties it) */
		drain(sc);
		sc->fills++;
		total_fills++;
		if (pfm_restart(sc->fd))
			fprintf(stderr, "pfmon: restart: %s\n", strerror(errno));
		sc->taken = 0;
	}
	return msg.type == PFM_MSG_END;
}

void smpl_unmap(struct smpl_ctx *sc)
{
	if (!sc->buf)
		return;
	drain(sc);
	total_lost += sc->lost;
	munmap((void *)sc->buf, opts.smpl_buf_size);
	sc->buf = NULL;
}

static void smpl_fix(const struct smpl_ctx *sc, struct reading *r)
{
	/* periods done (sampled or lost) plus the last partial one */
	r->set[0].raw[0] = (sc->samples + sc->lost) * opts.smpl_period +
			   (r->set[0].raw[0] + opts.smpl_period);
}

void smpl_read(int fd, const struct smpl_ctx *sc, struct reading *r)
{
	ctx_read(fd, r);
	if (sc)
		smpl_fix(sc, r);
}

void smpl_end(void)
{
	if (smpl_file) {
		syms_write_maps(smpl_file);
		if (fclose(smpl_file))
			die("--smpl-outfile %s: %s", opts.smpl_outfile,
			    strerror(errno));
		smpl_file = NULL;
	}
	fprintf(out, "\nsampling profile of %s: %llu samples, one every %llu %s",
		smpl_target, (unsigned long long)total_samples,
		(unsigned long long)opts.smpl_period, sets[0].ev[0].name);
	if (total_fills)
		fprintf(out, " (buffer filled %llu times)",
			(unsigned long long)total_fills);
	if (total_lost)
		fprintf(out, ", %llu lost (the host throttled or found them periods late)",
			(unsigned long long)total_lost);
	fprintf(out, "\n");
	if (total_samples)
		syms_report(out, opts.smpl_view, PROFILE_TABLE,
			    sets[0].ev[0].name);
	fflush(out);
}

struct file_entry {
	pid_t tgid, tid;
	uint32_t cpu;
	uint64_t tstamp, ip;
};

/* pfmon --report FILE: the profile of a --smpl-outfile */
int report_file(const char *path, enum smpl_view view,
		enum profile_fmt fmt)
{
	static char target[4096], event[128], exe[4096];
	struct file_entry *ents = NULL;
	size_t nents = 0, cap = 0, maps_len = 0, maps_cap = 0;
	size_t ids_len = 0, ids_cap = 0;
	char line[4200], *maps = NULL, *ids = NULL;
	unsigned long long period = 0;
	FILE *f = fopen(path, "re");
	bool v1, in_space = false;
	int lineno = 1, tgid = 0;

	if (!f)
		die("--report %s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), f) ||
	    (strcmp(line, SMPL_FILE_MAGIC "\n") &&
	     strcmp(line, SMPL_FILE_MAGIC_V1 "\n")))
		die("--report %s: not a pfmon --smpl-outfile (no \"" SMPL_FILE_MAGIC "\" line first)",
		    path);
	v1 = !strcmp(line, SMPL_FILE_MAGIC_V1 "\n");
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);
		bool space = !eof && (!strncmp(line, "space ", 6) ||
				      (v1 && !strcmp(line, "maps\n")));

		lineno++;
		if (in_space && (eof || space)) {
			syms_set_maps(tgid, maps ? maps : "", exe, ids);
			maps_len = ids_len = 0;
			if (maps)
				maps[0] = '\0';
			if (ids)
				ids[0] = '\0';
		}
		if (eof)
			break;
		if (space) {
			in_space = true;
			if (v1) {
				snprintf(exe, sizeof(exe), "%s", target);
				tgid = nents ? ents[0].tgid : 0;
			} else if (sscanf(line, "space %d %4095[^\n]", &tgid, exe) != 2) {
				die("--report %s:%d: a space without TGID and EXE", path, lineno);
			}
		} else if (in_space && !strncmp(line, "buildid ", 8)) {
			size_t n = strlen(line);

			ids = grow(ids, &ids_cap, ids_len + n + 1, 1, 65536);
			memcpy(ids + ids_len, line, n + 1);
			ids_len += n;
		} else if (in_space) {
			size_t n = strlen(line);

			maps = grow(maps, &maps_cap, maps_len + n + 1, 1, 65536);
			memcpy(maps + maps_len, line, n + 1);
			maps_len += n;
		} else if (!strncmp(line, "entry ", 6)) {
			unsigned long long ip, ts;
			int tid, pid;
			unsigned int cpu;

			if (sscanf(line, "entry tid=%d pid=%d ip=%llx tstamp=%llu cpu=%u ",
				   &tid, &pid, &ip, &ts, &cpu) != 5)
				die("--report %s:%d: an entry without tid=, pid=, ip=, tstamp= and cpu=", path, lineno);
			ents = grow(ents, &cap, nents, sizeof(*ents), 4096);
			ents[nents++] = (struct file_entry){ pid, tid, cpu, ts, ip };
		} else if (sscanf(line, v1 ? "exe %4095[^\n]" : "target %4095[^\n]", target) == 1 ||
			   sscanf(line, "event %127s", event) == 1 ||
			   sscanf(line, "period %llu", &period) == 1) {
			continue;
		} else {
			die("--report %s:%d: unknown line '%.40s'", path, lineno, line);
		}
	}
	fclose(f);
	if (!in_space || !target[0] || !event[0] || !period)
		die("--report %s: incomplete (no target, event, period or maps: was pfmon stopped while writing it?)",
		    path);
	for (size_t i = 0; i < nents; i++) {
		total_samples++;
		syms_hit(ents[i].tgid, ents[i].tid, ents[i].cpu, ents[i].tstamp,
			 ents[i].ip);
	}
	free(ents);
	free(maps);
	free(ids);
	/* the samples' period, as the file says it */
	opts.smpl_period = period;
	/* perf script's text and folded stacks are the profile alone */
	fprintf(fmt == PROFILE_TABLE ? out : stderr,
		"sampling profile of %s (from %s): %llu samples, one every %llu %s\n",
		target, path, (unsigned long long)total_samples, period, event);
	if (total_samples)
		syms_report(out, view, fmt, event);
	fflush(out);
	return 0;
}

const char *cmd_path(const char *cmd)
{
	static char path[4096];
	const char *env = getenv("PATH");
	char *copy, *dir, *save = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, path) ? path : (char *)cmd;
	copy = strdup(env ? env : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, cmd);
		if (!access(path, X_OK)) {
			char *r = realpath(path, NULL);

			if (r) {
				snprintf(path, sizeof(path), "%s", r);
				free(r);
			}
			free(copy);
			return path;
		}
	}
	free(copy);
	return (char *)cmd;
}

/* run the command, sampling its first thread; its status */
int sample_cmd(char **argv, int fd)
{
	struct smpl_ctx sc;
	pid_t pid;
	int rc = -1;

	smpl_map(&sc, fd);
	smpl_begin(cmd_path(argv[0]));
	session_start();
	pid = spawn(argv, fd, false);
	syms_watch(pid);
	while (rc < 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (session_wait(&pfd, 1, SMPL_POLL_MS) > 0)
			smpl_msg(&sc);
		smpl_poll(&sc);
		/* its libraries may have been mapped since */
		syms_snapshot();
		rc = cmd_reap(pid);
	}
	smpl_unmap(&sc);
	final_report(fd, &sc, NULL);
	smpl_end();
	return rc;
}
