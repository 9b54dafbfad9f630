/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One description per program gives getopt_long its options, --help its
 * text and the man page its sections, as perf's option tables do: what a
 * program takes is written once, beside what it says about it.
 *
 * Text (description, help, notes, sections) is plain: paragraphs apart by
 * a blank line, filled to 79 columns by --help and by groff in the man
 * page. A paragraph whose lines start with two spaces is shown as
 * it is (an example, a file's contents); one that starts with "- " is a
 * bullet; one that starts with "= TAG" an item, its text on the lines
 * after (the man page only: FILES, a list of names).
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdio.h>

/* a row of the option table: an option, a heading or a note */
struct cli_option {
	const char *name;	/* the long option; NULL: a heading or note */
	int key;		/* getopt_long's value; a letter: -letter too */
	const char *arg;	/* the argument's name; NULL: none */
	const char *help;	/* what it does */
	unsigned int flags;	/* CLI_F_* */
	const char *(*help_fn)(void);	/* help made from data, if no help */
};

#define CLI_F_ALIAS	0x1	/* another name of the row above */
#define CLI_F_HEADING	0x2	/* help is a heading (--help) / .SS (man) */
#define CLI_F_NOTE	0x4	/* help is a paragraph among the options */
#define CLI_F_HELP	0x8	/* --help: cli_getopt() answers it */
#define CLI_F_VERSION	0x10	/* --version: cli_getopt() answers it */

/* keys of options with no short form start here */
#define CLI_LONG_ONLY	256

#define CLI_OPT(name, key, arg, help)	{ name, key, arg, help, 0, NULL }
#define CLI_ALIAS(name, key, arg) \
	{ name, key, arg, NULL, CLI_F_ALIAS, NULL }
#define CLI_HEADING(text)	{ NULL, 0, NULL, text, CLI_F_HEADING, NULL }
#define CLI_NOTE(text)		{ NULL, 0, NULL, text, CLI_F_NOTE, NULL }
#define CLI_NOTE_FN(fn)		{ NULL, 0, NULL, NULL, CLI_F_NOTE, fn }
#define CLI_HELP_OPT \
	{ "help", 'h', NULL, "print this help and exit", CLI_F_HELP, NULL }
#define CLI_VERSION_OPT \
	{ "version", 'V', NULL, "print the version and exit", CLI_F_VERSION, \
	  NULL }
#define CLI_END			{ NULL, 0, NULL, NULL, 0, NULL }

struct cli_exit {
	int code;
	const char *what;	/* NULL ends the list */
};

/* a titled part of the man page: ERRORS, ENVIRONMENT, ... */
struct cli_section {
	const char *title;	/* NULL ends the list */
	const char *text;
	const char *(*text_fn)(void);	/* text made from data, if no text */
};

struct cli_program {
	const char *name;
	int man_section;		/* 1: user commands, 8: administration */
	const char *summary;		/* NAME's line, after "name - " */
	const char *synopsis;		/* usage lines after the name */
	const char *description;	/* --help and DESCRIPTION */
	const struct cli_option *options;
	bool stop_at_operand;		/* options end at the first operand */
	const struct cli_section *before_exit;	/* man only, after OPTIONS */
	const char *exit_intro;		/* a paragraph before the codes */
	const struct cli_exit *exits;
	const struct cli_section *after_exit;	/* man only: ERRORS, ... */
	const char *files;		/* FILES: "= PATH" items */
	const char *see_also;		/* "pfmon(1), perf-stat(1)" */
	const char *version;		/* --version's (CLI_VERSION_OPT) */
};

/*
 * getopt_long() over @p's table: the next option's key, -1 at the end,
 * '?' for a bad one. --help prints the help on stdout and exits 0, as
 * --version does "NAME VERSION"; the hidden --man prints the man page
 * (the build's) and exits 0.
 */
int cli_getopt(const struct cli_program *p, int argc, char **argv);

void cli_print_help(const struct cli_program *p, FILE *f);
void cli_print_man(const struct cli_program *p, FILE *f);

#endif
