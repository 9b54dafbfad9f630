// SPDX-License-Identifier: GPL-2.0
/*
 * A program's description (cli.h) as getopt_long's tables, as --help and
 * as a man page in roff (man(7) macros).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_OPTIONS	64
#define HELP_COLUMN	27	/* where an option's help starts in --help */
#define HELP_WIDTH	79
#define KEY_MAN		(-2)	/* --man: not in any table, not a letter */

/* ---- the table, as getopt_long takes it -------------------------------- */

static bool is_option(const struct cli_option *o)
{
	return o->name != NULL;
}

static bool is_row(const struct cli_option *o)
{
	return o->name || o->flags;
}

static const char *help_of(const struct cli_option *o)
{
	return o->help ? o->help : o->help_fn();
}

static bool has_short(const struct cli_option *o)
{
	return o->key > 0 && o->key < CLI_LONG_ONLY && isalnum(o->key);
}

/* a table the program's author got wrong is caught on its first run */
static void table_error(const struct cli_program *p, const char *what,
			const char *name)
{
	fprintf(stderr, "%s: option table: %s%s%s\n", p->name, what,
		name ? ": " : "", name ? name : "");
	abort();
}

int cli_getopt(const struct cli_program *p, int argc, char **argv)
{
	/* the table's options, --man, the end */
	static struct option longopts[MAX_OPTIONS + 2];
	/* "+", a letter and ":" per option, the end */
	static char shortopts[1 + 2 * MAX_OPTIONS + 1];
	static const struct cli_program *built;
	const struct cli_option *o;
	unsigned int n = 0;
	size_t s = 0;
	int key;

	if (built != p) {
		if (p->stop_at_operand)
			shortopts[s++] = '+';
		for (o = p->options; is_row(o); o++) {
			if (!is_option(o))
				continue;
			if (n == MAX_OPTIONS)
				table_error(p, "more than MAX_OPTIONS", NULL);
			if (o->flags & CLI_F_ALIAS && (o == p->options ||
						       o[-1].key != o->key))
				table_error(p, "an alias not below its option",
					    o->name);
			longopts[n++] = (struct option){
				o->name, o->arg ? required_argument :
						  no_argument, NULL, o->key };
			if (has_short(o) && !(o->flags & CLI_F_ALIAS)) {
				shortopts[s++] = o->key;
				if (o->arg)
					shortopts[s++] = ':';
			} else if (o->key < CLI_LONG_ONLY &&
				   !(o->flags & CLI_F_ALIAS)) {
				table_error(p, "a key neither a letter nor "
					    "CLI_LONG_ONLY or above", o->name);
			}
		}
		longopts[n++] = (struct option){ "man", no_argument, NULL,
						 KEY_MAN };
		longopts[n] = (struct option){ 0 };
		shortopts[s] = '\0';
		built = p;
	}

	key = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (key == KEY_MAN) {
		cli_print_man(p, stdout);
		exit(fflush(stdout) ? 1 : 0);
	}
	for (o = p->options; key > 0 && is_row(o); o++)
		if (o->flags & CLI_F_HELP && o->key == key) {
			cli_print_help(p, stdout);
			exit(fflush(stdout) ? 1 : 0);
		} else if (o->flags & CLI_F_VERSION && o->key == key) {
			printf("%s %s\n", p->name,
			       p->version ? p->version : "");
			exit(fflush(stdout) ? 1 : 0);
		}
	return key;
}

/* ---- --help ------------------------------------------------------------- */

/* spaces from column *@col to @to */
static void pad(FILE *f, int *col, int to)
{
	for (; *col < to; (*col)++)
		fputc(' ', f);
}

/*
 * @text for a terminal: each paragraph filled to HELP_WIDTH at @indent,
 * a literal one as written; the first starts at column @col.
 */
static void put_text(FILE *f, const char *text, int col, int indent)
{
	const char *p = text, *end, *w, *nl;
	int hang, len;
	bool fresh;

	for (; *p; p = *end ? end + 2 : end) {
		end = strstr(p, "\n\n");
		if (!end)
			end = p + strlen(p);
		if (p != text) {
			fputc('\n', f);
			col = 0;
		}
		if (!strncmp(p, "  ", 2)) {
			for (w = p; w < end; w = nl + 1, col = 0) {
				nl = memchr(w, '\n', end - w);
				if (!nl)
					nl = end;
				pad(f, &col, indent);
				fprintf(f, "%.*s\n", (int)(nl - w), w);
			}
			continue;
		}
		hang = 0;
		fresh = true;
		for (w = p; w < end; w += len) {
			while (w < end && (*w == ' ' || *w == '\n'))
				w++;
			len = strcspn(w, " \n");
			if (w + len > end)
				len = end - w;
			if (!len)
				break;
			if (!fresh && col + 1 + len > HELP_WIDTH) {
				fputc('\n', f);
				col = 0;
				fresh = true;
			}
			if (fresh)
				pad(f, &col, indent + hang);
			else
				col += fprintf(f, " ");
			col += fprintf(f, "%.*s", len, w);
			fresh = false;
			if (w == p && !strncmp(p, "- ", 2))
				hang = 2;	/* a bullet's lines under its text */
		}
		fputc('\n', f);
	}
}

/* @s with each - as roff's minus (@man) or as it is */
static int put_dashes(FILE *f, const char *s, bool man)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '-' && man ? fprintf(f, "\\-") : fprintf(f, "%c", *s);
	return n;
}

/*
 * "-e, --events, --set=EV": the option and its aliases, bold and italic
 * for roff (@man); the columns it took
 */
static int put_spec(FILE *f, const struct cli_option *o, bool man)
{
	const char *bold = man ? "\\fB" : "", *roman = man ? "\\fR" : "";
	const struct cli_option *a;
	int n = 0;

	if (has_short(o))
		n += fprintf(f, "%s%s%c%s, ", bold, man ? "\\-" : "-", o->key,
			     roman);
	else if (!man)
		n += fprintf(f, "    ");
	for (a = o; a == o || (a->name && a->flags & CLI_F_ALIAS); a++) {
		n += fprintf(f, "%s%s", a == o ? "" : ", ", bold);
		n += put_dashes(f, "--", man) + put_dashes(f, a->name, man);
		n += fprintf(f, "%s", roman);
	}
	if (o->arg)
		n += fprintf(f, man ? "=\\fI%s\\fR" : "=%s", o->arg);
	return n;
}

static void help_options(const struct cli_program *p, FILE *f)
{
	const struct cli_option *o;
	int len;

	for (o = p->options; is_row(o); o++) {
		if (o->flags & CLI_F_HEADING) {
			fprintf(f, "\n%s:\n", o->help);
		} else if (o->flags & CLI_F_NOTE) {
			fputc('\n', f);
			put_text(f, help_of(o), 0, 2);
		} else if (!(o->flags & CLI_F_ALIAS)) {
			len = fprintf(f, "  ") + put_spec(f, o, false);
			if (len >= HELP_COLUMN - 1) {
				fputc('\n', f);
				len = 0;
			}
			put_text(f, help_of(o), len, HELP_COLUMN);
		}
	}
}

void cli_print_help(const struct cli_program *p, FILE *f)
{
	const struct cli_exit *e;
	const char *line = p->synopsis, *nl;
	bool first = true;

	do {
		nl = strchr(line, '\n');
		fprintf(f, "%s %s %.*s\n", first ? "Usage:" : "      ", p->name,
			nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl + 1;
		first = false;
	} while (nl);
	fputc('\n', f);
	put_text(f, p->description, 0, 0);
	/* a table of one part has no heading of its own */
	if (!(p->options[0].flags & CLI_F_HEADING))
		fprintf(f, "\nOptions:\n");
	help_options(p, f);
	fprintf(f, "\nExit status:\n");
	if (p->exit_intro)
		put_text(f, p->exit_intro, 0, 2);
	for (e = p->exits; e->what; e++) {
		fprintf(f, "  %3d  ", e->code);
		put_text(f, e->what, 7, 7);
	}
	fprintf(f, "\nThe manual: man %d %s\n", p->man_section, p->name);
}

/* ---- the man page -------------------------------------------------------- */

/* @n bytes of @s with roff's escapes: backslash, and - as a minus */
static void roff_escape(FILE *f, const char *s, size_t n)
{
	for (; n; s++, n--) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* a filled line of text: no indentation, no request by accident */
static void roff_line(FILE *f, const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	if (n && (*s == '.' || *s == '\''))
		fputs("\\&", f);
	roff_escape(f, s, n);
	fputc('\n', f);
}

/* a literal line: as written, less its two spaces of indentation */
static void roff_literal(FILE *f, const char *s, size_t n)
{
	if (n >= 2 && !strncmp(s, "  ", 2)) {
		s += 2;
		n -= 2;
	}
	fputs("\\&", f);
	roff_escape(f, s, n);
	fputc('\n', f);
}

/*
 * @text's paragraphs; @in_item: they are an item's, after the tag line of
 * a .TP, and stay indented as its text
 */
static void roff_text(FILE *f, const char *text, bool in_item)
{
	const char *p = text, *end, *line, *nl;
	bool first = true, literal;

	for (; *p; first = false, p = *end ? end + 2 : end) {
		end = strstr(p, "\n\n");
		if (!end)
			end = p + strlen(p);
		literal = false;
		if (!strncmp(p, "= ", 2)) {
			/* "= TAG", then the item's text */
			nl = memchr(p, '\n', end - p);
			if (!nl)
				nl = end;
			fputs(".TP\n\\fB", f);
			roff_escape(f, p + 2, nl - p - 2);
			fputs("\\fR\n", f);
			p = nl < end ? nl + 1 : end;
		} else if (!strncmp(p, "- ", 2)) {
			fputs(".IP \\(bu 2\n", f);
			p += 2;
		} else if (!strncmp(p, "  ", 2)) {
			literal = true;
			fputs(in_item ? ".IP\n.nf\n" : ".PP\n.RS 2\n.nf\n", f);
		} else if (!in_item) {
			fputs(".PP\n", f);
		} else if (!first) {
			fputs(".IP\n", f);
		}
		for (line = p; line < end; line = nl + 1) {
			nl = memchr(line, '\n', end - line);
			if (!nl)
				nl = end;
			if (literal)
				roff_literal(f, line, nl - line);
			else
				roff_line(f, line, nl - line);
		}
		if (literal)
			fputs(in_item ? ".fi\n" : ".fi\n.RE\n", f);
	}
}

static void upper(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", f);
		else
			fputc(toupper((unsigned char)*s), f);
	}
}

static void man_options(const struct cli_program *p, FILE *f)
{
	const struct cli_option *o;

	fputs(".SH OPTIONS\n", f);
	for (o = p->options; is_row(o); o++) {
		if (o->flags & CLI_F_HEADING) {
			fputs(".SS ", f);
			roff_line(f, o->help, strlen(o->help));
		} else if (o->flags & CLI_F_NOTE) {
			roff_text(f, help_of(o), false);
		} else if (!(o->flags & CLI_F_ALIAS)) {
			fputs(".TP\n", f);
			put_spec(f, o, true);
			fputc('\n', f);
			roff_text(f, help_of(o), true);
		}
	}
}

static void man_sections(const struct cli_section *s, FILE *f)
{
	for (; s && s->title; s++) {
		fprintf(f, ".SH %s\n", s->title);
		roff_text(f, s->text ? s->text : s->text_fn(), false);
	}
}

void cli_print_man(const struct cli_program *p, FILE *f)
{
	const struct cli_exit *e;
	const char *line, *nl;

	fputs(".\\\" Generated from the program's own description (cli.h):\n"
	      ".\\\" edit that, not this file.\n.TH ", f);
	upper(f, p->name);
	fprintf(f, " %d \"\" \"kvm-perfmon\" \"%s\"\n", p->man_section,
		p->man_section == 8 ? "System Administration" :
				      "User Commands");
	/* names, paths and options are not to be hyphenated nor stretched */
	fputs(".nh\n.ad l\n", f);
	fputs(".SH NAME\n", f);
	roff_escape(f, p->name, strlen(p->name));
	fputs(" \\- ", f);
	roff_line(f, p->summary, strlen(p->summary));

	fputs(".SH SYNOPSIS\n", f);
	for (line = p->synopsis; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		fputs(line == p->synopsis ? "" : ".br\n", f);
		fputs("\\fB", f);
		roff_escape(f, p->name, strlen(p->name));
		fputs("\\fR ", f);
		roff_escape(f, line, nl ? (size_t)(nl - line) : strlen(line));
		fputc('\n', f);
	}

	fputs(".SH DESCRIPTION\n", f);
	roff_text(f, p->description, false);
	man_options(p, f);
	man_sections(p->before_exit, f);

	fputs(".SH EXIT STATUS\n", f);
	if (p->exit_intro)
		roff_text(f, p->exit_intro, false);
	for (e = p->exits; e->what; e++) {
		fprintf(f, ".TP\n.B %d\n", e->code);
		roff_text(f, e->what, true);
	}
	man_sections(p->after_exit, f);
	fputs(".SH FILES\n", f);
	roff_text(f, p->files, false);
	fputs(".SH SEE ALSO\n", f);
	roff_line(f, p->see_also, strlen(p->see_also));
}
