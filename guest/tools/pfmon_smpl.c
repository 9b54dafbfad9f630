// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's sampling (--smpl-period): the command's first thread sampled
 * into the default format's buffer, mmap()ed and drained at each full
 * buffer's notification; the profile resolved by pfmon_syms.c, the raw
 * samples kept with --smpl-outfile and resolved later by --report.
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
 * files of the map must still be there; kernel IPs take the /proc/kallsyms
 * of where --report runs, so the same guest kernel):
 *
 *   pfmon-samples 1
 *   exe PATH / event NAME / period N
 *   entry tid=T pid=P ip=0x.. tstamp=N cpu=C set=S ovfl_pmd=D last_reset=0x..
 *   ...                        (every entry of the sampling buffer, raw)
 *   maps                       (then the command's last /proc/PID/maps)
 */
#define SMPL_FILE_MAGIC	"pfmon-samples 1"

static FILE *smpl_file;
static uint64_t smpl_count;	/* samples taken */

/* periods done plus the last partial one */
uint64_t smpl_pmd_count(uint64_t raw)
{
	return smpl_count * opts.smpl_period + (raw + opts.smpl_period);
}

static void hit(const pfm_dfl_smpl_entry_t *ent)
{
	smpl_count++;
	syms_hit(ent->ip);
	if (smpl_file)
		fprintf(smpl_file, "entry tid=%u pid=%u ip=%#llx tstamp=%llu cpu=%u set=%u ovfl_pmd=%u last_reset=%#llx\n",
			ent->pid, ent->tgid, (unsigned long long)ent->ip,
			(unsigned long long)ent->tstamp, ent->cpu, ent->set,
			ent->ovfl_pmd, (unsigned long long)ent->last_reset_val);
}

static void smpl_file_open(const char *exe)
{
	smpl_file = fopen(opts.smpl_outfile, "we");
	if (!smpl_file)
		die("--smpl-outfile %s: %s", opts.smpl_outfile, strerror(errno));
	fprintf(smpl_file, SMPL_FILE_MAGIC "\nexe %s\nevent %s\nperiod %llu\n",
		exe, sets[0].ev[0].name, (unsigned long long)opts.smpl_period);
}

static void smpl_file_close(void)
{
	if (!smpl_file)
		return;
	fprintf(smpl_file, "maps\n%s", syms_maps());
	if (fclose(smpl_file))
		die("--smpl-outfile %s: %s", opts.smpl_outfile, strerror(errno));
	smpl_file = NULL;
}

/* pfmon --report FILE: the profile of a --smpl-outfile */
int report_file(const char *path, enum smpl_view view)
{
	static char exe[4096], event[128];
	char line[512], *maps_text = NULL;
	unsigned long long period = 0, ip;
	size_t len = 0;
	FILE *f = fopen(path, "re");
	int lineno = 1;

	if (!f)
		die("--report %s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), f) || strcmp(line, SMPL_FILE_MAGIC "\n"))
		die("--report %s: not a pfmon --smpl-outfile (no \"" SMPL_FILE_MAGIC "\" line first)",
		    path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strncmp(line, "entry ", 6)) {
			char *p = strstr(line, " ip=");

			if (!p || sscanf(p, " ip=%llx", &ip) != 1)
				die("--report %s:%d: an entry without ip=", path, lineno);
			smpl_count++;
			syms_hit(ip);
		} else if (sscanf(line, "exe %4095[^\n]", exe) == 1 ||
			   sscanf(line, "event %127s", event) == 1 ||
			   sscanf(line, "period %llu", &period) == 1) {
			continue;
		} else if (!strcmp(line, "maps\n")) {
			/* the rest of the file */
			maps_text = malloc(1 << 20);
			if (!maps_text)
				die("out of memory");
			len = fread(maps_text, 1, (1 << 20) - 1, f);
			maps_text[len] = '\0';
			break;
		} else {
			die("--report %s:%d: unknown line '%.40s'", path, lineno, line);
		}
	}
	fclose(f);
	if (!maps_text || !exe[0] || !event[0] || !period)
		die("--report %s: incomplete (no exe, event, period or maps: was pfmon stopped while writing it?)",
		    path);
	syms_set_maps(maps_text, exe);
	free(maps_text);
	fprintf(out, "sampling profile of %s (from %s): %llu samples, one every %llu %s\n",
		exe, path, (unsigned long long)smpl_count, period, event);
	if (smpl_count)
		syms_report(out, view);
	fflush(out);
	return 0;
}

/* every entry now in the buffer */
static void drain(const void *buf)
{
	const pfm_dfl_smpl_hdr_t *hdr = buf;
	const unsigned char *p = (const unsigned char *)buf + sizeof(*hdr);
	const unsigned char *end = (const unsigned char *)buf + hdr->hdr_buf_size;

	for (uint64_t i = 0; i < hdr->hdr_count; i++) {
		const pfm_dfl_smpl_entry_t *ent = (const void *)p;

		if (p + sizeof(*ent) > end)
			break;
		hit(ent);
		p += sizeof(*ent);	/* no PMDs recorded with the entry */
	}
}

static void profile_report(const char *exe, uint64_t overflows)
{
	fprintf(out, "\nsampling profile of %s: %llu samples, one every %llu %s",
		exe, (unsigned long long)smpl_count,
		(unsigned long long)opts.smpl_period, sets[0].ev[0].name);
	if (overflows)
		fprintf(out, " (buffer filled %llu times)",
			(unsigned long long)overflows);
	fprintf(out, "\n");
	if (smpl_count)
		syms_report(out, opts.smpl_view);
	fflush(out);
}

static char *which(const char *cmd)
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

/* run the command, sampling it; its status */
int sample_cmd(char **argv, int fd)
{
	const char *exe = which(argv[0]);
	uint64_t overflows = 0;
	void *buf;
	pid_t pid;
	int rc = -1;

	buf = mmap(NULL, opts.smpl_buf_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED)
		die("mapping the sampling buffer: %s", strerror(errno));
	if (opts.smpl_outfile)
		smpl_file_open(exe);
	session_start();
	pid = spawn(argv, fd, false);
	syms_begin(pid, exe);
	while (rc < 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		pfarg_msg_t msg;

		if (session_wait(&pfd, 1, 200) > 0 &&
		    read(fd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.type == PFM_MSG_OVFL) {
			/* buffer full: take it, restart (empties it) */
			drain(buf);
			overflows++;
			if (pfm_restart(fd))
				fprintf(stderr, "pfmon: restart: %s\n",
					strerror(errno));
		}
		/* its libraries may have been mapped since */
		syms_snapshot();
		rc = cmd_reap(pid);
	}
	drain(buf);
	smpl_file_close();
	final_report(fd, NULL);
	profile_report(exe, overflows);
	munmap(buf, opts.smpl_buf_size);
	return rc;
}
