/* SPDX-License-Identifier: BSD-3-Clause */

/* Telemetry commands behind one dispatcher and a stop switch. */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "cfutil.h"
#include "telemetry.h"

#define MAX_COMMANDS 24

static struct {
	const char *cmd;
	telemetry_cb fn;
} commands[MAX_COMMANDS];
static unsigned int nb_commands;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static bool stopped;

static int
dispatch(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int ret = -ENODEV;

	pthread_rwlock_rdlock(&lock);
	if (!stopped)
		for (unsigned int i = 0; i < nb_commands; i++)
			if (strcmp(commands[i].cmd, cmd) == 0) {
				ret = commands[i].fn(cmd, params, d);
				break;
			}
	pthread_rwlock_unlock(&lock);
	return ret;
}

int
app_telemetry_register(const char *cmd, telemetry_cb fn, const char *help,
		char *err, size_t err_len)
{
	int ret;

	/* Registered again (a benchmark setting the outputs up once per
	 * measured turn): the new callback, same command. */
	pthread_rwlock_wrlock(&lock);
	for (unsigned int i = 0; i < nb_commands; i++)
		if (strcmp(commands[i].cmd, cmd) == 0) {
			commands[i].fn = fn;
			pthread_rwlock_unlock(&lock);
			return 0;
		}
	if (nb_commands == MAX_COMMANDS) {
		pthread_rwlock_unlock(&lock);
		return cfu_fail(ENOSPC, err, err_len, "telemetry %s: more "
			"than %d commands", cmd, MAX_COMMANDS);
	}
	/* Under the lock: dispatch() may be reading the table for an
	 * earlier command's client. */
	commands[nb_commands].cmd = cmd;
	commands[nb_commands].fn = fn;
	nb_commands++;
	pthread_rwlock_unlock(&lock);
	ret = rte_telemetry_register_cmd(cmd, dispatch, help);
	if (ret != 0)
		return cfu_fail(-ret, err, err_len, "telemetry command %s: %s",
			cmd, strerror(-ret));
	return 0;
}

int
app_telemetry_register_all(const struct app_telemetry_cmd *cmds,
		unsigned int n, char *err, size_t err_len)
{
	for (unsigned int i = 0; i < n; i++) {
		int ret = app_telemetry_register(cmds[i].cmd, cmds[i].fn,
			cmds[i].help, err, err_len);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int
app_telemetry_alloc(struct rte_tel_data **d, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		d[i] = rte_tel_data_alloc();
		if (d[i] == NULL) {
			while (i-- > 0)
				rte_tel_data_free(d[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

void
app_telemetry_stop(void)
{
	pthread_rwlock_wrlock(&lock);
	stopped = true;
	pthread_rwlock_unlock(&lock);
}

void
app_telemetry_add_string(struct rte_tel_data *d, const char *name,
		const char *s)
{
	const size_t max = RTE_TEL_MAX_STRING_LEN - 1;
	char buf[RTE_TEL_MAX_STRING_LEN];
	size_t len = strlen(s), n = 0;
	char *out = malloc(4 * len + 1);

	if (out == NULL) {
		rte_tel_data_add_dict_string(d, name, "(out of memory)");
		return;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, 5, "\\x%02x", c);
	}
	out[n] = '\0';
	if (n > max)
		snprintf(buf, sizeof(buf), "...%s", out + n - (max - 3));
	else
		memcpy(buf, out, n + 1);
	free(out);
	rte_tel_data_add_dict_string(d, name, buf);
}
