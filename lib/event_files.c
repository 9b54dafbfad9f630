// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The eventmap and filter files (event_files.h): a line is words
 * separated by blanks, "#" starts a comment, blank lines are skipped.
 *
 *   eventmap:  generic SELECT UMASK -> KIND EVENT [emulated]
 *              fixed INDEX -> KIND EVENT [emulated]
 *              KIND: hardware, software (an event name or a number),
 *              hw_cache, raw (a number)
 *   filter:    allow | deny, first and once; then one event a line:
 *              generic SELECT[/MASK] UMASK[/MASK]
 *              fixed INDEX[/MASK]
 *              virtual PMD[/MASK]
 *
 * Numbers are decimal or 0x-prefixed hexadecimal; a mask defaults to
 * every bit of its field.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "event_files.h"

struct event_name {
	const char *name;
	__u64 config;
};

static const struct event_name hardware_events[] = {
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
	{ NULL, 0 }
};

static const struct event_name software_events[] = {
	{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
	{ NULL, 0 }
};

static const struct {
	const char *name;
	__u32 type;
	const struct event_name *names;	/* NULL: numbers only */
} host_kinds[] = {
	{ "hardware", PERF_TYPE_HARDWARE, hardware_events },
	{ "software", PERF_TYPE_SOFTWARE, software_events },
	{ "hw_cache", PERF_TYPE_HW_CACHE, NULL },
	{ "raw", PERF_TYPE_RAW, NULL },
};

#define NR_HOST_KINDS	(sizeof(host_kinds) / sizeof(host_kinds[0]))

/* the guest kinds of a filter line, by KVMPFM_EVK_* */
static const struct {
	const char *name;
	const char *what;
	__u16 max;
} filter_kinds[] = {
	[KVMPFM_EVK_GENERIC] = { "generic", "event select", 0xfff },
	[KVMPFM_EVK_FIXED] = { "fixed", "fixed counter index", 15 },
	[KVMPFM_EVK_VIRTUAL] = { "virtual", "virtual PMD", 0xffff },
};

#define NR_FILTER_KINDS	(sizeof(filter_kinds) / sizeof(filter_kinds[0]))
#define UMASK_MAX	0xff

static const char *const action_names[] = {
	[KVMPFM_FILTER_ALLOW] = "allow",
	[KVMPFM_FILTER_DENY] = "deny",
};

__attribute__((format(printf, 2, 3)))
static bool fail(struct event_file_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* decimal or 0x-prefixed hexadecimal, nothing else */
static bool parse_number(const char *str, unsigned long long max,
			 unsigned long long *val)
{
	const char *digits = str;
	char *end;
	int base = 10;

	if (str[0] == '0' && (str[1] == 'x' || str[1] == 'X')) {
		base = 16;
		digits = str + 2;
	}
	if (!strchr(base == 16 ? "0123456789abcdefABCDEF" : "0123456789",
		    digits[0]) || !digits[0])
		return false;
	errno = 0;
	*val = strtoull(str, &end, base);
	return !errno && !*end && *val <= max;
}

/* @word as a number from 0 to @max */
static bool parse_field(const char *word, const char *what,
			unsigned long long max, unsigned long long *val,
			struct event_file_error *err)
{
	if (!word)
		return fail(err, "the %s is missing", what);
	if (!parse_number(word, max, val))
		return fail(err, "the %s '%s' is not a number from 0 to 0x%llx",
			    what, word, max);
	return true;
}

/* NUMBER or NUMBER/MASK; the mask defaults to every bit of @max */
static bool parse_masked(const char *word, const char *what, __u16 max,
			 __u16 *val, __u16 *mask, struct event_file_error *err)
{
	char num[EVENT_FILE_MAX_LINE];
	unsigned long long v, m = max;
	char *slash;

	if (!word)
		return parse_field(NULL, what, max, &v, err);
	snprintf(num, sizeof(num), "%s", word);
	slash = strchr(num, '/');
	if (slash)
		*slash = '\0';
	if (!parse_field(num, what, max, &v, err) ||
	    (slash && !parse_field(slash + 1, "mask", max, &m, err)))
		return false;
	*val = v;
	*mask = m;
	return true;
}

static void name_list(const struct event_name *names, char *buf, size_t size)
{
	size_t at = 0;

	buf[0] = '\0';
	for (; names->name && at < size; names++)
		at += snprintf(buf + at, size - at, "%s%s", at ? ", " : "",
			       names->name);
}

static bool parse_host_event(const char *const *w,
			     struct kvmpfm_event_map_entry *e,
			     struct event_file_error *err)
{
	const struct event_name *name;
	unsigned long long val;
	char known[160];
	size_t k;

	if (!w[0])
		return fail(err, "the host event is missing after '->'");
	for (k = 0; k < NR_HOST_KINDS; k++)
		if (!strcmp(w[0], host_kinds[k].name))
			break;
	if (k == NR_HOST_KINDS)
		return fail(err, "unknown host event type '%s' (hardware, "
			    "software, hw_cache or raw)", w[0]);
	e->host_type = host_kinds[k].type;
	if (!w[1])
		return fail(err, "'%s' needs an event %s", host_kinds[k].name,
			    host_kinds[k].names ? "name or number" : "number");
	for (name = host_kinds[k].names; name && name->name; name++)
		if (!strcmp(w[1], name->name))
			break;
	if (name && name->name) {
		e->host_config = name->config;
	} else if (parse_number(w[1], ~0ULL, &val)) {
		e->host_config = val;
	} else if (host_kinds[k].names) {
		name_list(host_kinds[k].names, known, sizeof(known));
		return fail(err, "unknown %s event '%s' (a number or one of: "
			    "%s)", host_kinds[k].name, w[1], known);
	} else {
		return fail(err, "'%s' is not a number", w[1]);
	}
	return true;
}

static bool parse_alias(const char *const *w, struct kvmpfm_event_map_entry *e,
			struct event_file_error *err)
{
	unsigned long long val, umask = 0;
	int i;

	memset(e, 0, sizeof(*e));
	if (!strcmp(w[0], "generic")) {
		if (!parse_field(w[1], "event select", 0xfff, &val, err) ||
		    !parse_field(w[2], "unit mask", UMASK_MAX, &umask, err))
			return false;
		e->guest_kind = KVMPFM_EVK_GENERIC;
		i = 3;
	} else if (!strcmp(w[0], "fixed")) {
		if (!parse_field(w[1], "fixed counter index", 15, &val, err))
			return false;
		e->guest_kind = KVMPFM_EVK_FIXED;
		i = 2;
	} else {
		return fail(err, "expected 'generic' or 'fixed', not '%s'", w[0]);
	}
	e->guest_event = val;
	e->guest_umask = umask;
	if (!w[i] || strcmp(w[i], "->"))
		return fail(err, "expected '->' after the guest event, not '%s'",
			    w[i] ? w[i] : "the end of the line");
	i++;
	if (!parse_host_event(&w[i], e, err))
		return false;
	i += 2;
	if (w[i] && !strcmp(w[i], "emulated")) {
		e->flags |= KVMPFM_MAP_EMULATED;
		i++;
	}
	if (w[i])
		return fail(err, "unexpected '%s' after the host event", w[i]);
	return true;
}

typedef bool line_parser(const char *const *words, unsigned int line,
			 void *opaque, struct event_file_error *err);

/* each line of @text with words to @parse, which fails with err->msg set */
static int read_lines(const char *text, size_t len, line_parser *parse,
		      void *opaque, struct event_file_error *err)
{
	char buf[EVENT_FILE_MAX_LINE];
	const char *words[EVENT_FILE_MAX_WORDS + 1];
	const char *p = text, *end = text + len, *nl;
	unsigned int nr_words;
	char *tok, *save;
	size_t n;

	err->line = 0;
	if (len > EVENT_FILE_MAX_SIZE || memchr(text, '\0', len)) {
		fail(err, "not a text file of at most %u KiB",
		     EVENT_FILE_MAX_SIZE / 1024);
		return -1;
	}
	while (p < end) {
		err->line++;
		nl = memchr(p, '\n', end - p);
		n = (nl ? nl : end) - p;
		if (n >= sizeof(buf)) {
			fail(err, "a line of more than %u characters",
			     EVENT_FILE_MAX_LINE - 1);
			return -1;
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + 1;
		tok = strchr(buf, '#');
		if (tok)
			*tok = '\0';
		nr_words = 0;
		for (tok = strtok_r(buf, " \t\r\v\f", &save); tok;
		     tok = strtok_r(NULL, " \t\r\v\f", &save)) {
			if (nr_words == EVENT_FILE_MAX_WORDS) {
				fail(err, "too many words");
				return -1;
			}
			words[nr_words++] = tok;
		}
		words[nr_words] = NULL;
		if (nr_words && !parse(words, err->line, opaque, err))
			return -1;
	}
	return 0;
}

struct map_load {
	struct kvmpfm_event_map *map;
	unsigned int line_of[KVMPFM_MAX_EVENT_MAP];
};

static bool parse_map_line(const char *const *words, unsigned int line,
			   void *opaque, struct event_file_error *err)
{
	struct map_load *ld = opaque;
	struct kvmpfm_event_map *map = ld->map;
	struct kvmpfm_event_map_entry e;
	__u32 i;

	if (!parse_alias(words, &e, err))
		return false;
	for (i = 0; i < map->nr; i++)
		if (map->entries[i].guest_kind == e.guest_kind &&
		    map->entries[i].guest_event == e.guest_event &&
		    map->entries[i].guest_umask == e.guest_umask)
			return fail(err, "this guest event is already mapped on "
				    "line %u", ld->line_of[i]);
	if (map->nr == KVMPFM_MAX_EVENT_MAP)
		return fail(err, "more than %u aliases", KVMPFM_MAX_EVENT_MAP);
	ld->line_of[map->nr] = line;
	map->entries[map->nr++] = e;
	return true;
}

int event_map_parse(const char *text, size_t len,
		    struct kvmpfm_event_map *map, struct event_file_error *err)
{
	struct map_load ld = { .map = map };

	map->nr = 0;
	return read_lines(text, len, parse_map_line, &ld, err);
}

struct filter_load {
	struct kvmpfm_event_filter *filter;
	bool have_action;
};

static bool parse_filter_event(const char *const *w,
			       struct kvmpfm_filter_event *e,
			       struct event_file_error *err)
{
	__u16 umask = 0, umask_mask = 0;
	size_t k;
	int n = 2;

	memset(e, 0, sizeof(*e));
	for (k = 0; k < NR_FILTER_KINDS; k++)
		if (!strcmp(w[0], filter_kinds[k].name))
			break;
	if (k == NR_FILTER_KINDS)
		return fail(err, "expected 'generic', 'fixed' or 'virtual', "
			    "not '%s'", w[0]);
	e->guest_kind = k;
	if (!parse_masked(w[1], filter_kinds[k].what, filter_kinds[k].max,
			  &e->event, &e->event_mask, err))
		return false;
	if (k == KVMPFM_EVK_GENERIC) {
		if (!parse_masked(w[2], "unit mask", UMASK_MAX, &umask,
				  &umask_mask, err))
			return false;
		n = 3;
	}
	if (w[n])
		return fail(err, "unexpected '%s' after the event", w[n]);
	e->umask = umask;
	e->umask_mask = umask_mask;
	return true;
}

static bool parse_filter_line(const char *const *w, unsigned int line,
			      void *opaque, struct event_file_error *err)
{
	struct filter_load *ld = opaque;
	struct kvmpfm_event_filter *f = ld->filter;
	__u32 a;

	(void)line;

	for (a = 0; a < sizeof(action_names) / sizeof(action_names[0]); a++) {
		if (strcmp(w[0], action_names[a]))
			continue;
		if (ld->have_action)
			return fail(err, "'allow' or 'deny' comes once, before "
				    "the events");
		f->action = a;
		ld->have_action = true;
		return w[1] ? fail(err, "unexpected '%s'", w[1]) : true;
	}
	if (!ld->have_action)
		return fail(err, "the first line must be 'allow' or 'deny'");
	if (f->nr == KVMPFM_MAX_FILTER)
		return fail(err, "more than %u events", KVMPFM_MAX_FILTER);
	if (!parse_filter_event(w, &f->events[f->nr], err))
		return false;
	f->nr++;
	return true;
}

int event_filter_parse(const char *text, size_t len,
		       struct kvmpfm_event_filter *filter,
		       struct event_file_error *err)
{
	struct filter_load ld = { .filter = filter };

	filter->nr = 0;
	if (read_lines(text, len, parse_filter_line, &ld, err))
		return -1;
	if (!ld.have_action) {
		err->line = 0;
		fail(err, "no 'allow' or 'deny' line");
		return -1;
	}
	return 0;
}

const char *event_filter_action_name(__u32 action)
{
	return action < sizeof(action_names) / sizeof(action_names[0]) ?
	       action_names[action] : NULL;
}

int event_filter_line(const struct kvmpfm_filter_event *e, char *buf,
		      size_t size)
{
	const char *name = e->guest_kind < NR_FILTER_KINDS ?
			   filter_kinds[e->guest_kind].name : "?";
	int n;

	n = snprintf(buf, size, "%s 0x%x/0x%x", name, e->event, e->event_mask);
	if (e->guest_kind == KVMPFM_EVK_GENERIC && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, " 0x%02x/0x%02x", e->umask,
			      e->umask_mask);
	return n;
}
