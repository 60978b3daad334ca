/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The application's settings without the EAL: app_config_parse() on the
 * options after "--" and on --cfg files, as app/main.c calls it. Every
 * refusal names what is wrong (the option, the value, FILE:LINE) and
 * fills nothing the run would use; every accepted spelling sets the
 * field it names. The shipped config/cuckooflow.ini is read key by key
 * and checked against the defaults it documents, and a copy of it with
 * every value changed is read back through app_config_visit().
 *
 * One TAP line per table row; ./test_app_config NAME runs the rows
 * whose name holds NAME. Files go to a directory of the test's own
 * under $TMPDIR, removed at the end.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "test.h"

#ifndef SHIPPED_INI
#error "SHIPPED_INI: the path of config/cuckooflow.ini"
#endif

#define MAX_ARGS 16
#define MAX_WORDS 4
#define ERR_LEN 2048

static char tmp[256];

/* ------------------------------------------------------------ files */

static const char *
tmp_path(const char *name)
{
	static char paths[8][512];
	static unsigned int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmp, name);
	return p;
}

static const char *
write_file(const char *name, const char *data, size_t len)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return path;
}

static void
remove_tree(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", path);
}

/*
 * A 284-character path under tmp, all of whose directories exist: too
 * long for the 255 bytes a path option holds, though it could be opened.
 */
static const char *
long_path(void)
{
	static char path[1024];
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/%040d/%040d/%040d/%040d", tmp, 1, 2,
		3, 4);
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	if (system(path) != 0)
		exit(2);
	snprintf(path, sizeof(path), "%s/%0*d.json", dir,
		(int)(284 - strlen(dir) - 6), 5);
	return path;
}

/* ------------------------------------------------------------ parsing */

/*
 * Parse the application arguments @args (NULL-terminated; "@INI" is
 * replaced by @ini, "@LONG" by a long path, "@DIR" by a directory, "@X"
 * by tmp/X for other X). Returns app_config_parse()'s value; @err gets
 * its messages.
 */
static int
parse(struct app_config *cfg, const char *const *args, const char *ini,
		char *err)
{
	char *argv[MAX_ARGS + 2];
	char store[MAX_ARGS][600];
	int argc = 0;

	argv[argc++] = (char *)(uintptr_t)"cuckooflow";
	for (unsigned int i = 0; args[i] != NULL && i < MAX_ARGS; i++) {
		const char *a = args[i], *at = strchr(a, '@');

		if (at == NULL) {
			argv[argc++] = (char *)(uintptr_t)a;
			continue;
		}
		/* the text before '@', then the file it names */
		if (strcmp(at, "@INI") == 0)
			snprintf(store[i], sizeof(store[i]), "%.*s%s",
				(int)(at - a), a, ini);
		else if (strcmp(at, "@LONG") == 0)
			snprintf(store[i], sizeof(store[i]), "%.*s%s",
				(int)(at - a), a, long_path());
		else
			snprintf(store[i], sizeof(store[i]), "%.*s%s",
				(int)(at - a), a, tmp_path(at + 1));
		argv[argc++] = store[i];
	}
	argv[argc] = NULL;
	return app_config_parse(cfg, argc, argv, err, ERR_LEN);
}

/* ------------------------------------------------------------ refusals */

struct refusal {
	const char *name;
	const char *ini;        /* written to tmp/NAME.ini as @INI, or NULL */
	size_t ini_len;         /* 0: strlen(ini) */
	const char *args[MAX_ARGS];
	const char *words[MAX_WORDS]; /* "@INI:2:" is the file and line */
};

#define INI(text) .ini = text, .ini_len = sizeof(text) - 1

static const struct refusal refusals[] = {
	/* values out of range or of the wrong kind, on the command line */
	{ "--burst 0", .args = { "--burst", "0" }, .words = { "--burst" } },
	{ "--burst 65", .args = { "--burst", "65" }, .words = { "--burst" } },
	{ "--burst x", .args = { "--burst", "x" }, .words = { "--burst" } },
	{ "--rxq 0", .args = { "--rxq", "0" }, .words = { "--rxq" } },
	{ "--mbufs x", .args = { "--mbufs", "x" }, .words = { "--mbufs" } },
	{ "--mode bridge", .args = { "--mode", "bridge" },
		.words = { "--mode" } },
	{ "--fp-bits 3", .args = { "--fp-bits", "3" },
		.words = { "--fp-bits" } },
	{ "--fp-bits 33", .args = { "--fp-bits", "33" },
		.words = { "--fp-bits" } },
	/* a word for 0 is named with the range */
	{ "--fp-bits x", .args = { "--fp-bits", "x" },
		.words = { "--fp-bits x: want an integer in 4..32, or auto" } },
	{ "--rxq x", .args = { "--rxq", "x" },
		.words = { "--rxq x: want an integer in 1..1024, or auto" } },
	{ "--flows 0", .args = { "--flows", "0" }, .words = { "--flows" } },
	{ "--flows 2061584303", .args = { "--flows", "2061584303" },
		.words = { "--flows" } },
	{ "--flows 2147483648", .args = { "--flows", "2147483648" },
		.words = { "--flows" } },
	{ "--hash crc", .args = { "--hash", "crc" }, .words = { "--hash" } },
	{ "--decap vxlan,mpls", .args = { "--decap", "vxlan,mpls" },
		.words = { "mpls" } },
	{ "--hash-seed -1", .args = { "--hash-seed", "-1" },
		.words = { "--hash-seed" } },
	{ "--clock wall", .args = { "--clock", "wall" },
		.words = { "--clock" } },
	{ "--idle-timeout 0", .args = { "--idle-timeout", "0" },
		.words = { "--idle-timeout" } },
	{ "--close-linger -5", .args = { "--close-linger", "-5" },
		.words = { "--close-linger" } },
	{ "--full-policy drop", .args = { "--full-policy", "drop" },
		.words = { "--full-policy" } },
	{ "--table-layout sideways", .args = { "--table-layout", "sideways" },
		.words = { "--table-layout sideways: want one of auto plain "
			"interleaved" } },
	{ "--stats-period 100000", .args = { "--stats-period", "100000" },
		.words = { "--stats-period" } },
	{ "--portmask 0", .args = { "--portmask", "0" },
		.words = { "--portmask" } },
	{ "--no-such-option", .args = { "--no-such-option" },
		.words = { "--no-such-option" } },
	{ "--burst without a value", .args = { "--burst" },
		.words = { "--burst" } },
	{ "a stray argument", .args = { "stray" }, .words = { "stray" } },
	{ "--cfg of a missing file", .args = { "--cfg", "/nonexistent.ini" },
		.words = { "/nonexistent.ini" } },
	/* glibc takes an abbreviation of several options alike (all with
	 * a value) for the first: --time 5 set --timeout-tcp, --c F
	 * --clock */
	{ "--time is ambiguous", .args = { "--time", "5" },
		.words = { "--time:", "ambiguous" } },
	{ "--c is ambiguous", .args = { "--c", "x.ini" },
		.words = { "--c:", "ambiguous" } },
	{ "--stats is ambiguous", .args = { "--stats", "1" },
		.words = { "--stats:", "ambiguous" } },
	{ "--stats-json-period without --stats-period",
		.args = { "--stats-json-period", "@p.json" },
		.words = { "--stats-json-period", "needs --stats-period" } },
	{ "--state-interval without --state-file",
		.args = { "--state-interval", "60" },
		.words = { "--state-interval 60", "needs --state-file" } },
	{ "--state-interval 0", .args = { "--state-file", "@s.state",
		"--state-interval", "0" }, .words = { "--state-interval 0",
		"1..86400, or off" } },
	/* the firewall's options among themselves (ports in use are the
	 * EAL's: tests/e2e/test_firewall_extra.py) */
	{ "--inside without --outside", .args = { "--mode", "forward",
		"--inside", "0" }, .words = { "--inside given without "
		"--outside" } },
	{ "--outside without --inside", .args = { "--mode", "forward",
		"--outside", "1" }, .words = { "--outside given without "
		"--inside" } },
	{ "firewall in monitor mode", .args = { "--inside", "0",
		"--outside", "1" }, .words = { "--inside/--outside need "
		"--mode forward" } },
	{ "a port in both roles", .args = { "--mode", "forward", "--inside",
		"0-1", "--outside", "1" }, .words = { "port 1",
		"both --inside and --outside" } },
	{ "a bad port list", .args = { "--mode", "forward", "--inside", "0,",
		"--outside", "1" }, .words = { "--inside 0,", "port ids" } },
	{ "--allow without roles", .args = { "--mode", "forward", "--allow",
		"@allow.txt" }, .words = { "--allow",
		"only with --inside and --outside" } },
	{ "--firewall-nd without roles", .args = { "--mode", "forward",
		"--firewall-nd", "drop" }, .words = { "--firewall-nd drop",
		"only with --inside and --outside" } },
	{ "--firewall-nd maybe", .args = { "--mode", "forward", "--inside",
		"0", "--outside", "1", "--firewall-nd", "maybe" },
		.words = { "--firewall-nd maybe", "auto drop pass" } },
	{ "--frag-hold without following", .args = { "--frag-datagrams",
		"off", "--frag-hold", "10" }, .words = { "--frag-hold needs "
		"fragments followed" } },
	{ "--frag-datagrams over the bound", .args = { "--frag-datagrams",
		"16777217" }, .words = { "--frag-datagrams 16777217",
		"1..16777216" } },
	{ "--frag-hold 65537", .args = { "--frag-hold", "65537" },
		.words = { "--frag-hold 65537", "1..65536" } },
	{ "--frag-timeout 0", .args = { "--frag-timeout", "0" },
		.words = { "--frag-timeout 0", "1..3600" } },
	{ "a mirror port in a role", .args = { "--mode", "forward",
		"--inside", "0", "--outside", "1-2", "--mirror-port", "2",
		"--mirror-first", "3" }, .words = { "--mirror-port 2",
		"firewall role" } },
	{ "--mirror-port without --mirror-first", .args = { "--mode",
		"forward", "--inside", "0", "--outside", "1", "--mirror-port",
		"2" }, .words = { "--mirror-port needs --mirror-first" } },
	{ "--mirror-first without --mirror-port", .args = { "--mode",
		"forward", "--inside", "0", "--outside", "1", "--mirror-first",
		"2" }, .words = { "--mirror-first needs --mirror-port" } },
	{ "--mirror-first 255", .args = { "--mode", "forward", "--inside",
		"0", "--outside", "1", "--mirror-port", "2", "--mirror-first",
		"255" }, .words = { "--mirror-first 255", "1..254" } },
	{ "mirroring in monitor mode", .args = { "--mirror-port", "2",
		"--mirror-first", "2" }, .words = { "--mirror-port needs "
		"--mode forward" } },
	{ "--new-flow-burst without --new-flow-rate",
		.args = { "--new-flow-burst", "5" },
		.words = { "--new-flow-burst needs --new-flow-rate" } },
	{ "--emergency-low not below --emergency-load",
		.args = { "--emergency-load", "50", "--emergency-low", "50" },
		.words = { "--emergency-low 50",
			"not below --emergency-load 50" } },
	{ "--emergency-low without --emergency-load",
		.args = { "--emergency-low", "20" },
		.words = { "--emergency-low needs --emergency-load" } },
	{ "--ipfix with --records off", .args = { "--ipfix", "127.0.0.1:9",
		"--records", "off" }, .words = { "--ipfix 127.0.0.1:9",
		"not with --records off" } },
	{ "records with 16-bit state", .args = { "--ipfix", "127.0.0.1:9",
		"--age-bits", "16" }, .words = { "--records",
		"--age-bits 32" } },
	{ "--records on with no output", .args = { "--records", "on" },
		.words = { "--records on", "--events FILE or --ipfix" } },
	{ "--records maybe", .args = { "--records", "maybe" },
		.words = { "--records maybe", "auto", "off" } },
	{ "--records-max past 2^31", .args = { "--records-max",
		"2147483649" }, .words = { "--records-max 2147483649" } },
	/* INI values */
	{ "fp_bits = 40 in the file", INI("[flows]\nfp_bits = 40\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "fp_bits" } },
	{ "an unknown key", INI("[flows]\nno_such_key = 1\n"),
		.args = { "--cfg", "@INI" },
		.words = { "@INI:2:", "no_such_key" } },
	{ "tcp = soon", INI("[timeouts]\ntcp = soon\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "tcp" } },
	{ "mode = inline", INI("[ports]\nmode = inline\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "mode" } },
	{ "not an INI file", INI("not an ini file [[[\n"),
		.args = { "--cfg", "@INI" }, .words = { "line 1" } },
	{ "a key without a name", INI("[flows]\n= 3\n"),
		.args = { "--cfg", "@INI" }, .words = { "line 2" } },
	/* --cfg however getopt spells it */
	{ "--cfg=F: a bad value in F is refused with F:line",
		INI("[flows]\nfp_bits = 40\n"), .args = { "--cfg=@INI" },
		.words = { "@INI:2:", "fp_bits" } },
	{ "--cf F: a bad value in F is refused with F:line",
		INI("[flows]\nfp_bits = 40\n"), .args = { "--cf", "@INI" },
		.words = { "@INI:2:", "fp_bits" } },
	{ "--cfg twice", INI("[flows]\nfp_bits = 16\n"),
		.args = { "--cfg", "@INI", "--cfg", "@INI" },
		.words = { "--cfg", "twice" } },
	{ "--cfg= and --cf: twice", INI("[flows]\nfp_bits = 16\n"),
		.args = { "--cfg=@INI", "--cf", "@INI" },
		.words = { "--cfg", "twice" } },
	/* sections */
	{ "the 17th section is read (bad value at line 18)",
		INI("[flows]\n[flows]\n[flows]\n[flows]\n[flows]\n[flows]\n"
		"[flows]\n[flows]\n[flows]\n[flows]\n[flows]\n[flows]\n"
		"[flows]\n[flows]\n[flows]\n[flows]\n[flows]\nfp_bits = 40\n"),
		.args = { "--cfg", "@INI" },
		.words = { "@INI:18:", "fp_bits" } },
	{ "an unknown section",
		INI("[flows]\nfp_bits = 16\n\n[flow]\nfp_bits = 16\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:4:", "[flow]" } },
	{ "an unknown key after a comment",
		INI("; comment\n[flows]\nno_such_key = 1\n"),
		.args = { "--cfg", "@INI" },
		.words = { "@INI:3:", "no_such_key" } },
	{ "a key before any section", INI("fp_bits = 16\n[flows]\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:1:", "fp_bits" } },
	/* duplicates */
	{ "a key given twice in a section: both lines named",
		INI("[flows]\nfp_bits = 16\n; again\nfp_bits = 20\n"),
		.args = { "--cfg", "@INI" },
		.words = { "@INI:4:", "fp_bits", "line 2" } },
	{ "a key given again in a repeated section: both lines named",
		INI("[flows]\nfp_bits = 16\n[run]\nexit_on_eof = 1\n[flows]\n"
		"fp_bits = 20\n"), .args = { "--cfg", "@INI" },
		.words = { "@INI:6:", "fp_bits", "line 2" } },
	{ "33 keys in a section are not cut to 32",
		INI("[flows]\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nfp_bits = 12\nfp_bits = 12\nfp_bits = 12\n"
		"fp_bits = 12\nno_such_key = 1\n"), .args = { "--cfg", "@INI" },
		.words = { "@INI:3:", "fp_bits", "line 2" } },
	/* bytes */
	{ "a line starting with a NUL byte", INI("[flows]\n\0fp_bits = 40\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "NUL" } },
	{ "a NUL byte inside a line", INI("[flows]\nfp_bits = 16\0 40\n"),
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "NUL" } },
	{ "a line longer than the bound", .ini = "@LONGLINE",
		.args = { "--cfg", "@INI" }, .words = { "@INI:2:", "longer" } },
	{ "a file over 1 MiB", .ini = "@BIG", .args = { "--cfg", "@INI" },
		.words = { "@INI", "MiB" } },
	/* not regular files */
	{ "--cfg DIR", .args = { "--cfg", "@dir" },
		.words = { "@dir", "a directory" } },
	{ "--cfg FIFO, without blocking", .args = { "--cfg", "@fifo" },
		.words = { "@fifo", "a FIFO" } },
	{ "--cfg /dev/null", .args = { "--cfg", "/dev/null" },
		.words = { "/dev/null", "a character device" } },
	/* string limits */
	{ "a 284-character stats_json in the file, not cut", .ini = "@LONGINI",
		.args = { "--cfg", "@INI" },
		.words = { "@INI:2:", "stats_json", "255" } },
	{ "a 284-character --stats-json, not cut",
		.args = { "--stats-json", "@LONG" },
		.words = { "--stats-json", "255" } },
	{ "a 1399-character workers.config, not cut", .ini = "@LONGMAP",
		.args = { "--cfg", "@INI" },
		.words = { "@INI:2:", "config", "1023" } },
	/* --stats-json checked before the run */
	{ "--stats-json DIR", .args = { "--stats-json", "@dir" },
		.words = { "--stats-json", "@dir", "directory" } },
	{ "--stats-json DIR/", .args = { "--stats-json", "@dir/" },
		.words = { "--stats-json", "directory" } },
	{ "--stats-json in a missing directory",
		.args = { "--stats-json", "@no_such_dir/s.json" },
		.words = { "--stats-json", "@no_such_dir/s.json" } },
	{ "--stats-json under a regular file",
		.args = { "--stats-json", "@a_file/s.json" },
		.words = { "--stats-json", "@a_file/s.json" } },
	{ "stats_json = DIR in the file", .ini = "@JSONDIR",
		.args = { "--cfg", "@INI" },
		.words = { "@INI:2:", "stats_json", "directory" } },
	{ "a bad value under [filter]",
		INI("[filter]\nblocklist_unparsed = maybe\n"),
		.args = { "--cfg", "@INI" },
		.words = { "@INI:2:", "blocklist_unparsed" } },
	{ "--state-file DIR", .args = { "--state-file", "@dir" },
		.words = { "--state-file", "want a regular file" } },
	{ "--state-file in a missing directory",
		.args = { "--state-file", "@no_such_dir/s.state" },
		.words = { "--state-file", "@no_such_dir" } },
};

/* An INI file's text for the special names of struct refusal.ini. */
static const char *
special_ini(const char *which, size_t *len)
{
	static char *buf;
	size_t cap = 12u << 20, n = 0;

	free(buf);
	buf = malloc(cap);
	if (buf == NULL)
		exit(2);
	if (strcmp(which, "@LONGLINE") == 0) {
		n = (size_t)sprintf(buf, "[flows]\n;");
		memset(buf + n, 'x', 5000);
		n += 5000;
		buf[n++] = '\n';
	} else if (strcmp(which, "@BIG") == 0) {
		for (unsigned int i = 0; i < 11000; i++) {
			memcpy(buf + n, "; ", 2);
			memset(buf + n + 2, 'x', 98);
			buf[n + 100] = '\n';
			n += 101;
		}
	} else if (strcmp(which, "@LONGINI") == 0) {
		n = (size_t)sprintf(buf, "[run]\nstats_json = %s\n",
			long_path());
	} else if (strcmp(which, "@LONGMAP") == 0) {
		n = (size_t)sprintf(buf, "[workers]\nconfig = (0,0,1)");
		for (unsigned int i = 1; i < 200; i++)
			n += (size_t)sprintf(buf + n, ",(0,0,1)");
		buf[n++] = '\n';
	} else if (strcmp(which, "@JSONDIR") == 0) {
		n = (size_t)sprintf(buf, "[run]\nstats_json = %s\n",
			tmp_path("dir"));
	}
	*len = n;
	return buf;
}

/* @word with "@INI" replaced by @ini and "@X" by tmp/X. */
static const char *
expand(const char *word, const char *ini)
{
	static char out[1024];
	const char *at = strchr(word, '@');
	size_t name_len;

	if (at == NULL)
		return word;
	if (strncmp(at, "@INI", 4) == 0) {
		snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - word), word,
			ini, at + 4);
		return out;
	}
	name_len = strcspn(at + 1, ":");
	snprintf(out, sizeof(out), "%.*s%s/%.*s%s", (int)(at - word), word,
		tmp, (int)name_len, at + 1, at + 1 + name_len);
	return out;
}

static int
check_refusal(const struct refusal *r)
{
	struct app_config cfg;
	char err[ERR_LEN];
	const char *ini = "";
	int ret;

	if (r->ini != NULL) {
		size_t len = r->ini_len;
		const char *text = r->ini;

		if (text[0] == '@')
			text = special_ini(text, &len);
		ini = write_file("refusal.ini", text, len);
	}
	ret = parse(&cfg, r->args, ini, err);
	if (ret >= 0) {
		printf("# accepted (%d): %s\n", ret, err);
		return -1;
	}
	if (errno != -ret) {
		printf("# returned %d, errno %d\n", ret, errno);
		return -1;
	}
	if (strncmp(err, "cuckooflow: ", 12) != 0) {
		printf("# message without the program's name: %s\n", err);
		return -1;
	}
	for (unsigned int w = 0; w < MAX_WORDS && r->words[w] != NULL; w++) {
		const char *want = expand(r->words[w], ini);

		if (strstr(err, want) == NULL) {
			printf("# message lacks \"%s\": %s\n", want, err);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ accepted */

struct accepted {
	const char *name;
	const char *ini;
	const char *args[MAX_ARGS];
	int (*check)(const struct app_config *cfg, const char *err);
};

static int
flows_5000(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->flows != 5000) {
		printf("# flows %" PRIu64 ", want 5000\n", cfg->flows);
		return -1;
	}
	return 0;
}

static int
cli_wins(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->flows != 6000 || strstr(cfg->stats_json, "cli.json") ==
			NULL) {
		printf("# flows %" PRIu64 ", stats_json %s: want 6000 and "
			"the command line's file\n", cfg->flows,
			cfg->stats_json);
		return -1;
	}
	return 0;
}

static int
override(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->fp_bits != 32 || cfg->close_linger_s != 0 ||
			!cfg->exit_on_eof) {
		printf("# fp_bits %" PRIu64 " (want the command line's 32), "
			"close_linger %" PRIu64 ", exit_on_eof %d\n",
			cfg->fp_bits, cfg->close_linger_s, cfg->exit_on_eof);
		return -1;
	}
	return 0;
}

static int
timeout_tcp_5(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->timeout_s[CFLOW_CLASS_TCP] != 5 || !cfg->exit_on_eof) {
		printf("# tcp timeout %" PRIu64 ", exit_on_eof %d\n",
			cfg->timeout_s[CFLOW_CLASS_TCP], cfg->exit_on_eof);
		return -1;
	}
	return 0;
}

static int
comments(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->flows != 5000 || cfg->fp_bits != 16) {
		printf("# flows %" PRIu64 ", fp_bits %" PRIu64 "\n",
			cfg->flows, cfg->fp_bits);
		return -1;
	}
	return 0;
}

static int
json_from_cli(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (strstr(cfg->stats_json, "later.json") == NULL) {
		printf("# stats_json %s\n", cfg->stats_json);
		return -1;
	}
	return 0;
}

static int
unparsed_pass(const struct app_config *cfg, const char *err)
{
	if (cfg->blocklist_unparsed != APP_UNPARSED_PASS || err[0] != '\0') {
		printf("# blocklist_unparsed %u, messages: %s\n",
			cfg->blocklist_unparsed, err);
		return -1;
	}
	return 0;
}

static int
unparsed_pass_warned(const struct app_config *cfg, const char *err)
{
	const char *dep = strstr(err, "deprecated");

	if (cfg->blocklist_unparsed != APP_UNPARSED_PASS || dep == NULL ||
			strstr(dep + 1, "deprecated") != NULL ||
			strstr(err, ":4:") == NULL ||
			strstr(err, "[blocklist]") == NULL) {
		printf("# blocklist_unparsed %u, messages: %s\n",
			cfg->blocklist_unparsed, err);
		return -1;
	}
	return 0;
}

static int
firewall_fp32(const struct app_config *cfg, const char *err)
{
	(void)err;
	if (cfg->fp_bits != APP_FIREWALL_FP_BITS || cfg->inside_mask != 1 ||
			cfg->outside_mask != 6) {
		printf("# fp_bits %" PRIu64 ", inside 0x%" PRIx64 ", outside "
			"0x%" PRIx64 "\n", cfg->fp_bits, cfg->inside_mask,
			cfg->outside_mask);
		return -1;
	}
	return 0;
}

static const struct accepted accepted[] = {
	{ "--cfg F reads F", "[flows]\nflows = 5000\n",
		{ "--cfg", "@INI" }, flows_5000 },
	{ "--cfg=F reads F", "[flows]\nflows = 5000\n", { "--cfg=@INI" },
		flows_5000 },
	{ "--cf F reads F", "[flows]\nflows = 5000\n", { "--cf", "@INI" },
		flows_5000 },
	{ "--cf=F reads F", "[flows]\nflows = 5000\n", { "--cf=@INI" },
		flows_5000 },
	{ "the command line overrides the file",
		"[flows]\nfp_bits = 16\nclose_linger = 0\n[run]\n"
		"exit_on_eof = 1\n", { "--cfg", "@INI", "--fp-bits", "32" },
		override },
	{ "the command line before --cf still overrides",
		"[flows]\nflows = 5000\n[run]\nstats_json = file.json\n",
		{ "--stats-json", "@cli.json", "--flows", "6000", "--cf",
		"@INI" }, cli_wins },
	{ "an unambiguous abbreviation", NULL,
		{ "--timeout-t", "5", "--exit" }, timeout_tcp_5 },
	{ "a repeated section is read whole",
		"[run]\nexit_on_eof = 1\n[flows]\nflows = 5000\n[run]\n"
		"stats_period = 1\n", { "--cfg", "@INI" }, flows_5000 },
	{ "comments, blank lines, CRLF and spaces",
		"# a comment\r\n\r\n  ; another\r\n[ flows ]\r\n"
		"  flows=5000  ; inline\r\nfp_bits = 16\t# inline\r\n",
		{ "--cfg", "@INI" }, comments },
	{ "a bad stats_json in the file overridden is not checked",
		"[run]\nstats_json = /no/such/dir/\n",
		{ "--cfg", "@INI", "--stats-json", "@later.json" },
		json_from_cli },
	{ "[blocklist] holds its keys",
		"[blocklist]\nblocklist_unparsed = pass\n", { "--cfg", "@INI" },
		unparsed_pass },
	{ "[filter] read as [blocklist] with one warning",
		"[run]\nexit_on_eof = 1\n\n[filter]\n"
		"blocklist_unparsed = pass\n", { "--cfg", "@INI" },
		unparsed_pass_warned },
	{ "firewall roles: 32-bit fingerprints by default", NULL,
		{ "--mode", "forward", "--inside", "0", "--outside", "1-2" },
		firewall_fp32 },
};

static int
check_accepted(const struct accepted *a)
{
	struct app_config cfg;
	char err[ERR_LEN];
	const char *ini = "";
	int ret;

	if (a->ini != NULL)
		ini = write_file("accepted.ini", a->ini, strlen(a->ini));
	ret = parse(&cfg, a->args, ini, err);
	if (ret != 0) {
		printf("# refused (%d): %s\n", ret, err);
		return -1;
	}
	return a->check(&cfg, err);
}

/* ------------------------------------------------- the shipped config */

#define MAX_KEYS 128

struct kv {
	char name[192]; /* section_key */
	char value[320];
};

struct kvs {
	struct kv kv[MAX_KEYS];
	unsigned int n;
};

static void
kvs_add(const char *section, const char *key, const char *value, void *arg)
{
	struct kvs *s = arg;

	if (s->n == MAX_KEYS)
		return;
	snprintf(s->kv[s->n].name, sizeof(s->kv[0].name), "%s_%s", section,
		key);
	snprintf(s->kv[s->n].value, sizeof(s->kv[0].value), "%s", value);
	s->n++;
}

static const char *
kvs_get(const struct kvs *s, const char *name)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (strcmp(s->kv[i].name, name) == 0)
			return s->kv[i].value;
	return NULL;
}

/*
 * The shipped file's keys and values, read here with a reader of the
 * test's own (sections, "key = value", '#' and ';' comments): not the
 * application's.
 */
static int
read_shipped(struct kvs *s)
{
	FILE *f = fopen(SHIPPED_INI, "r");
	char line[512], section[64] = "";

	if (f == NULL) {
		printf("# %s: %s\n", SHIPPED_INI, strerror(errno));
		return -1;
	}
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f) != NULL) {
		char key[96], value[320];

		if (sscanf(line, " [%63[^]]]", section) == 1)
			continue;
		if (line[0] == '#' || line[0] == ';' || line[0] == '\n')
			continue;
		if (sscanf(line, " %95[a-z_0-9] = %319[^ \t\n#;]", key,
				value) == 2)
			kvs_add(section, key, value, s);
	}
	fclose(f);
	return 0;
}

/*
 * config/cuckooflow.ini documents every setting the application has,
 * each with its default: the keys and values the application reports
 * (app_config_visit(), /cuckooflow/config) with no options given equal
 * the file's, one for one; and read with --cfg, the file changes none.
 */
static int
shipped_ini_is_the_defaults(void)
{
	const char *none[] = { NULL };
	const char *with_file[] = { "--cfg", SHIPPED_INI, NULL };
	struct app_config cfg;
	static struct kvs file, defaults, read;
	char err[ERR_LEN];
	int ret;

	if (read_shipped(&file) != 0)
		return -1;
	ret = parse(&cfg, none, "", err);
	TEST_ASSERT_EQ(ret, 0, "defaults refused: %s", err);
	app_config_visit(&cfg, kvs_add, &defaults);
	ret = parse(&cfg, with_file, "", err);
	TEST_ASSERT_EQ(ret, 0, "shipped file refused: %s", err);
	app_config_visit(&cfg, kvs_add, &read);
	TEST_ASSERT(file.n > 30, "only %u keys read from %s", file.n,
		SHIPPED_INI);
	for (unsigned int i = 0; i < file.n; i++) {
		const char *d = kvs_get(&defaults, file.kv[i].name);

		TEST_ASSERT(d != NULL, "%s: %s is not a setting",
			SHIPPED_INI, file.kv[i].name);
		/* auto is resolved by the parse (fp_bits: 12 without
		 * firewall roles; firewall_unparsed: drop) */
		if (strcmp(file.kv[i].value, "auto") == 0)
			continue;
		TEST_ASSERT(strcmp(d, file.kv[i].value) == 0,
			"%s: %s = %s, but the default is %s", SHIPPED_INI,
			file.kv[i].name, file.kv[i].value, d);
	}
	for (unsigned int i = 0; i < defaults.n; i++) {
		const char *d = defaults.kv[i].value;

		/* settings without a default value to show (paths, lists)
		 * may be left out of the file */
		if (d[0] == '\0' || strcmp(d, "random") == 0)
			continue;
		TEST_ASSERT(kvs_get(&file, defaults.kv[i].name) != NULL,
			"%s: the setting %s (default %s) is not documented",
			SHIPPED_INI, defaults.kv[i].name, d);
		TEST_ASSERT(strcmp(kvs_get(&read, defaults.kv[i].name), d)
			== 0, "%s read with --cfg: %s = %s, want %s",
			SHIPPED_INI, defaults.kv[i].name,
			kvs_get(&read, defaults.kv[i].name), d);
	}
	return 0;
}

/* Another valid value than @v for the setting @name, or NULL. */
static const char *
other_value(const char *name, const char *v)
{
	static const struct {
		const char *name, *value;
	} words[] = {
		{ "ports_portmask", "0x3" }, { "ports_rxq", "2" },
		{ "ports_txq", "2" }, { "ports_mode", "forward" },
		{ "ports_max_pkt_len", "9018" }, { "ports_burst", "16" },
		{ "ports_mbufs", "4096" }, { "workers_affinity", "handoff" },
		{ "workers_handoff_full", "drop" },
		{ "flows_fp_bits", "16" }, { "flows_age_bits", "16" },
		{ "flows_hash", "rss" }, { "flows_clock", "pkt" },
		{ "flows_full_policy", "untracked" },
		{ "flows_exact_size", "1" }, { "flows_table_layout", "plain" },
		{ "flows_vlan_in_key", "1" }, { "flows_new_flow_rate", "1000" },
		{ "flows_new_flow_burst", "50" },
		{ "flows_emergency_load", "90" },
		{ "flows_emergency_low", "70" },
		{ "blocklist_blocklist_unparsed", "pass" },
		{ "firewall_tcp_strict", "1" }, { "mirror_port", "none" },
		/* refused without firewall roles, which the file has not */
		{ "firewall_firewall_unparsed", "auto" },
		{ "firewall_firewall_nd", "auto" },
		{ "mirror_first", "off" }, { "run_exit_on_eof", "1" },
		{ "run_stats_period", "5" }, { "run_stats_all", "1" },
		/* refused without a state_file, which the file has not */
		{ "run_state_interval", "off" },
		/* on: refused without an output, which the file has not */
		{ "events_records", "off" }, { "events_records_max", "1000" },
	};
	static char num[32];

	for (unsigned int i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(words[i].name, name) == 0)
			return words[i].value;
	if (v[0] >= '1' && v[0] <= '9') {
		/* a number: one less (every numeric default is above its
		 * minimum by at least one) */
		snprintf(num, sizeof(num), "%" PRIu64,
			(uint64_t)strtoull(v, NULL, 10) - 1);
		return num;
	}
	return NULL;
}

/*
 * The shipped file with every value changed (a second valid value per
 * key), read through --cfg: each key's new value is what the
 * application reports. A reader that skipped the file, a key or a
 * section would leave a default.
 */
static int
every_shipped_key_is_read(void)
{
	const char *args[] = { "--cfg", "@INI", NULL };
	static struct kvs file, read;
	static char text[16384];
	struct app_config cfg;
	char err[ERR_LEN], section[64] = "";
	const char *ini;
	size_t n = 0;
	unsigned int changed = 0;
	int ret;

	if (read_shipped(&file) != 0)
		return -1;
	for (unsigned int i = 0; i < file.n; i++) {
		const char *name = file.kv[i].name;
		const char *sep = strchr(name, '_');
		const char *nv = other_value(name, file.kv[i].value);

		TEST_ASSERT(nv != NULL, "no second value known for %s = %s",
			name, file.kv[i].value);
		if (strcmp(nv, file.kv[i].value) == 0)
			continue; /* mirror's: "none"/"off" are the only
				   * values valid alone */
		if (strncmp(section, name, (size_t)(sep - name)) != 0 ||
				section[sep - name] != '\0') {
			snprintf(section, sizeof(section), "%.*s",
				(int)(sep - name), name);
			n += (size_t)snprintf(text + n, sizeof(text) - n,
				"[%s]\n", section);
		}
		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"%s = %s\n", sep + 1, nv);
		snprintf(file.kv[i].value, sizeof(file.kv[i].value), "%s",
			nv);
		changed++;
	}
	ini = write_file("changed.ini", text, n);
	ret = parse(&cfg, args, ini, err);
	TEST_ASSERT_EQ(ret, 0, "changed file refused: %s\n%s", err, text);
	app_config_visit(&cfg, kvs_add, &read);
	for (unsigned int i = 0; i < file.n; i++) {
		const char *got = kvs_get(&read, file.kv[i].name);

		if (strcmp(file.kv[i].value, "auto") == 0)
			continue; /* left as shipped, resolved by the parse */
		TEST_ASSERT(got != NULL && strcmp(got, file.kv[i].value) ==
			0, "%s = %s in the file, the application has %s",
			file.kv[i].name, file.kv[i].value, got);
	}
	TEST_ASSERT(changed > 30, "only %u keys changed", changed);
	return 0;
}

/* ------------------------------------------------------------ runner */

int
main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	const unsigned int nr = sizeof(refusals) / sizeof(refusals[0]);
	const unsigned int na = sizeof(accepted) / sizeof(accepted[0]);
	const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "shipped config/cuckooflow.ini is the defaults",
			shipped_ini_is_the_defaults },
		{ "every key of the shipped file is read",
			every_shipped_key_is_read },
	};
	const unsigned int nc = sizeof(cases) / sizeof(cases[0]);
	const char *base = getenv("TMPDIR");
	unsigned int planned = 0, t = 0, failed = 0;

	snprintf(tmp, sizeof(tmp), "%s/test_app_config.XXXXXX",
		base != NULL ? base : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		printf("Bail out! mkdtemp %s: %s\n", tmp, strerror(errno));
		return 2;
	}
	if (mkdir(tmp_path("dir"), 0755) != 0 ||
			mkfifo(tmp_path("fifo"), 0644) != 0) {
		printf("Bail out! %s: %s\n", tmp, strerror(errno));
		return 2;
	}
	write_file("a_file", "x", 1);
	write_file("allow.txt", "tcp 198.18.1.10 22\n", 19);

#define SELECTED(n) (only == NULL || strstr((n), only) != NULL)
	for (unsigned int i = 0; i < nr; i++)
		planned += SELECTED(refusals[i].name);
	for (unsigned int i = 0; i < na; i++)
		planned += SELECTED(accepted[i].name);
	for (unsigned int i = 0; i < nc; i++)
		planned += SELECTED(cases[i].name);
	printf("1..%u\n", planned);
	for (unsigned int i = 0; i < nr; i++) {
		int ret;

		if (!SELECTED(refusals[i].name))
			continue;
		ret = check_refusal(&refusals[i]);
		printf("%s %u - refused: %s\n", ret == 0 ? "ok" : "not ok",
			++t, refusals[i].name);
		failed += ret != 0;
	}
	for (unsigned int i = 0; i < na; i++) {
		int ret;

		if (!SELECTED(accepted[i].name))
			continue;
		ret = check_accepted(&accepted[i]);
		printf("%s %u - accepted: %s\n", ret == 0 ? "ok" : "not ok",
			++t, accepted[i].name);
		failed += ret != 0;
	}
	for (unsigned int i = 0; i < nc; i++) {
		int ret;

		if (!SELECTED(cases[i].name))
			continue;
		ret = cases[i].fn();
		printf("%s %u - %s\n", ret == 0 ? "ok" : "not ok", ++t,
			cases[i].name);
		failed += ret != 0;
	}
	fflush(stdout);
	remove_tree(tmp);
	return failed != 0;
}
