// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user context accounting: the host's max_contexts
 * is the whole VM's, so controls/max_ctx_per_user bounds the contexts one
 * uid has alive (EMFILE above it; default a quarter of max_contexts, at
 * least 1); CAP_SYS_ADMIN is exempt. A context is charged until it is
 * closed. Run as root: the users are uids 65534 and 65533 in children.
 * The uids mapped into a user namespace are its owner's: uid 65534 in a
 * namespace of its own, with subordinate uids mapped as newuidmap would
 * (root writes the maps), has its 3 and no more as ns uid 0 and ns uid 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "t_common.h"

#define CTL		"controls/max_ctx_per_user"
#define LIMIT		3
#define MAX_TRY		(LIMIT + 2)

struct user_run {
	int setup;		/* 0, or errno of dropping privileges */
	int created;		/* contexts made before the first failure */
	int err;		/* that failure's errno, 0 if none */
	int again;		/* after closing one: 0 or errno */
};

struct user_child {
	pid_t pid;
	int res;		/* read end: struct user_run */
	int hold;		/* write end: closing it lets the child go */
};

/*
 * Contexts into @fds until one is refused, MAX_TRY at most: how many were
 * made; *@err gets the refusal's errno (left as it is if none was refused).
 */
static int create_until_refused(int *fds, int *err)
{
	int n;

	for (n = 0; n < MAX_TRY; n++) {
		fds[n] = t_create(0);
		if (fds[n] < 0) {
			*err = errno;
			break;
		}
	}
	return n;
}

/*
 * A child as @uid: create up to MAX_TRY contexts, close one, create one
 * again, report, and hold what it has until the parent lets it go.
 */
static int user_start(struct user_child *c, uid_t uid)
{
	int res[2], hold[2], fds[MAX_TRY];
	struct user_run r;
	char ch;

	if (pipe(res) || pipe(hold))
		return -1;
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(res[0]);
		close(hold[1]);
		memset(&r, 0, sizeof(r));
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			r.setup = errno;
		if (!r.setup)
			r.created = create_until_refused(fds, &r.err);
		if (!r.setup && r.created) {
			close(fds[0]);
			fds[0] = t_create(0);
			r.again = fds[0] < 0 ? errno : 0;
		}
		if (write(res[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		/* hold the contexts until the parent closes its end */
		if (read(hold[0], &ch, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	close(hold[0]);
	c->res = res[0];
	c->hold = hold[1];
	return 0;
}

static int user_result(struct user_child *c, struct user_run *r)
{
	memset(r, 0, sizeof(*r));
	return read(c->res, r, sizeof(*r)) == sizeof(*r) ? 0 : -1;
}

static void user_end(struct user_child *c)
{
	int st;

	close(c->hold);
	close(c->res);
	waitpid(c->pid, &st, 0);
}

/* one user's run, checked: @limit created, then EMFILE; one again after a close */
static void check_user(const char *who, const struct user_run *r, int limit)
{
	char name[96];

	if (r->setup) {
		snprintf(name, sizeof(name), "user: %s: drop to the uid", who);
		t_fail(name, "%s", strerrorname_np(r->setup));
		return;
	}
	snprintf(name, sizeof(name), "user: %s: %d contexts, then EMFILE",
		 who, limit);
	t_check(r->created == limit && r->err == EMFILE, name,
		"%d created, then %s", r->created,
		r->err ? strerrorname_np(r->err) : "no failure");
	if (!limit)
		return;
	snprintf(name, sizeof(name), "user: %s: a closed context is uncharged",
		 who);
	t_check(!r->again, name, "create after close: %s",
		strerrorname_np(r->again));
}

/* write @map to /proc/@pid/@file: 0 or -1 */
static int write_map(pid_t pid, const char *file, const char *map)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fputs(map, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

struct ns_run {
	int step;	/* 0, else the setup step that failed (errno in err) */
	int err;
	int created;	/* as ns uid 0 (uid 65534), before the first failure */
	int err0;	/* that failure */
	int sub_err;	/* as ns uid 1 (a subordinate uid): 0 created, errno */
};

/*
 * uid 65534 in a user namespace of its own whose uid 0 is 65534 and uid 1
 * a subordinate uid (SUBUID, not a user of this system): up to MAX_TRY
 * contexts as ns uid 0, then one as ns uid 1.
 */
#define SUBUID		200000
static void subordinate(void)
{
	char map[64], c = 0;
	int go[2], res[2], fds[MAX_TRY], st;
	struct ns_run r = { .step = 9 };
	char saved;
	pid_t pid;

	if (pipe(go) || pipe(res)) {
		t_fail("user: subordinate uids: setup", "%s", strerrorname_np(errno));
		return;
	}
	saved = t_userns_allow();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(res[0]);
		memset(&r, 0, sizeof(r));
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			r.step = 1;
		else if (unshare(CLONE_NEWUSER))
			r.step = 2;
		/* the parent writes the maps, then a byte */
		else if (write(res[1], &c, 1) != 1 || read(go[0], &c, 1) != 1 || c)
			r.step = 3;
		r.err = errno;
		if (!r.step)
			r.created = create_until_refused(fds, &r.err0);
		if (!r.step && setresuid(1, 1, 1)) {
			r.step = 4;
			r.err = errno;
		}
		if (!r.step)
			r.sub_err = t_create(0) < 0 ? errno : 0;
		if (write(res[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	if (pid > 0 && read(res[0], &c, 1) == 1) {
		snprintf(map, sizeof(map), "0 65534 1\n1 %d 1\n", SUBUID);
		c = write_map(pid, "uid_map", map) ||
		    write_map(pid, "gid_map", map) ? 1 : 0;
		if (write(go[1], &c, 1) != 1 ||
		    read(res[0], &r, sizeof(r)) != sizeof(r))
			r.step = 9;
	} else if (pid > 0) {
		/* the child failed before the maps: its report follows */
		if (read(res[0], &r, sizeof(r)) != sizeof(r))
			r.step = 9;
	}
	close(go[1]);
	close(res[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	t_userns_restore(saved);
	if (!t_check(!r.step, "user: uid 65534 in its own namespace, a subordinate uid mapped",
		     "step %d (1 nobody, 2 unshare, 3 maps, 4 setresuid): %s",
		     r.step, strerrorname_np(r.err)))
		return;
	t_check(r.created == LIMIT && r.err0 == EMFILE,
		"user: ns uid 0 (uid 65534): 3 contexts, then EMFILE",
		"%d created, then %s", r.created,
		r.err0 ? strerrorname_np(r.err0) : "no failure");
	t_check(r.sub_err == EMFILE,
		"user: ns uid 1 (a subordinate uid) is charged to uid 65534: EMFILE",
		"%s", r.sub_err ? strerrorname_np(r.sub_err) : "created");
}

int main(void)
{
	struct user_child a, b;
	struct user_run r;
	char saved[32], val[32];
	long long max_ctx, dflt;
	int fds[LIMIT + 1], i, n;

	if (!t_root()) {
		t_skip("user: per-user limit", "not root: cannot switch uids");
		return t_done();
	}
	if (t_sysfs_read(CTL, saved, sizeof(saved))) {
		t_fail("user: " CTL " exists", "%s", strerrorname_np(errno));
		return t_done();
	}
	t_pass("user: " CTL " exists");
	max_ctx = t_sysfs_num("device/max_contexts", -1);
	dflt = max_ctx / 4 > 1 ? max_ctx / 4 : 1;
	printf("user: max_contexts %lld, max_ctx_per_user %s\n", max_ctx,
	       saved);
	t_check(atoll(saved) == dflt, "user: default is max_contexts/4",
		"%s, want %lld", saved, dflt);
	snprintf(val, sizeof(val), "%lld", max_ctx + 1);
	t_expect_err("user: above max_contexts is EINVAL",
		     t_sysfs_write(CTL, val), EINVAL);
	if (max_ctx < LIMIT + 2) {
		t_skip("user: limit checks", "max_contexts %lld", max_ctx);
		return t_done();
	}
	snprintf(val, sizeof(val), "%d", LIMIT);
	if (!t_expect_ok("user: set the limit to 3", t_sysfs_write(CTL, val)))
		return t_done();

	/* uid 65534 holds its 3: root and another uid still create */
	if (user_start(&a, 65534) || user_result(&a, &r)) {
		t_fail("user: uid 65534", "child: %s", strerrorname_np(errno));
		goto restore;
	}
	check_user("uid 65534", &r, LIMIT);
	for (n = 0; n < LIMIT + 1; n++) {
		fds[n] = t_create(0);
		if (fds[n] < 0)
			break;
	}
	t_check(n == LIMIT + 1, "user: root is exempt",
		"root made %d of %d: %s", n, LIMIT + 1,
		n < LIMIT + 1 ? strerrorname_np(errno) : "");
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (!user_start(&b, 65533) && !user_result(&b, &r)) {
		check_user("uid 65533 beside a full uid 65534", &r, LIMIT);
		user_end(&b);
	} else {
		t_fail("user: uid 65533", "child: %s", strerrorname_np(errno));
	}
	user_end(&a);

	/* everything closed at exit: uid 65534 has its 3 again */
	if (!user_start(&a, 65534) && !user_result(&a, &r)) {
		check_user("uid 65534 after its contexts closed", &r, LIMIT);
		user_end(&a);
	}

	subordinate();

	/* 0: only root */
	if (t_expect_ok("user: set the limit to 0", t_sysfs_write(CTL, "0")) &&
	    !user_start(&a, 65534) && !user_result(&a, &r)) {
		check_user("uid 65534 at limit 0", &r, 0);
		user_end(&a);
	}
restore:
	t_expect_ok("user: restore the limit", t_sysfs_write(CTL, saved));
	return t_done();
}
