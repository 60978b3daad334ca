/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * ipfix_send: flow records from a text file through the IPFIX exporter
 * (cflow_ipfix.h), each message sent as a UDP datagram and/or written
 * to a file, back to back (each message's header has its length). For
 * the tests: a collector (nfcapd) or a decoder (scapy) checks the bytes.
 *
 * usage: ipfix_send [--to HOST:PORT] [--out FILE] [--domain N] [--mtu N]
 *                   [--refresh S] [--refresh-msgs N] [--now S] [FILE]
 *
 * Records, one a line ('#' starts a comment), from FILE or stdin:
 *
 *   idle|active|end|forced|resources FIRST_NS LAST_NS SRC DST SPORT DPORT
 *       PROTO TCP_FLAGS PORT BYTES PACKETS FLOW_ID ICMP_TYPE ICMP_CODE
 *
 * SRC and DST IPv4 or IPv6 (both of one family); times nanoseconds since
 * the Unix epoch; protocols 1 and 58 are ICMP; numbers in C notation
 * (0x12). HOST is numeric: 127.0.0.1 or [::1]. --now is the export time
 * (default: the clock), the same for every message. Prints "N records
 * read, M messages, R records, B bytes".
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cflow_ipfix.h"

struct out {
	int sock;       /* -1: none */
	FILE *file;     /* NULL: none */
};

static int
emit(const uint8_t *msg, size_t len, void *arg)
{
	struct out *o = arg;

	if (o->sock >= 0 && send(o->sock, msg, len, 0) != (ssize_t)len)
		return -errno;
	if (o->file != NULL && fwrite(msg, 1, len, o->file) != len)
		return -EIO;
	return 0;
}

/* A number of at most @p max in C notation; -1 if it is not one. */
static int
num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno != 0 || end == s || *end != '\0' || *v > max ? -1 : 0;
}

/* HOST:PORT, HOST numeric ([...] for IPv6), into a connected socket. */
static int
open_udp(const char *arg)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	char host[128];
	struct addrinfo *ai;
	const char *colon = strrchr(arg, ':');
	size_t n;
	int fd;

	if (colon == NULL || (size_t)(colon - arg) >= sizeof(host))
		return -1;
	n = (size_t)(colon - arg);
	if (n >= 2 && arg[0] == '[' && arg[n - 1] == ']') {
		memcpy(host, arg + 1, n - 2);
		host[n - 2] = '\0';
	} else {
		memcpy(host, arg, n);
		host[n] = '\0';
	}
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
		return -1;
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* One record line into @p r; -1 if it is not one. */
static int
parse_record(char *line, struct cflow_flow_record *r)
{
	static const char *const reasons[] = { "idle", "active", "end",
		"forced", "resources" };
	static const uint64_t max[15] = { 0, UINT64_MAX, UINT64_MAX, 0, 0,
		UINT16_MAX, UINT16_MAX, UINT8_MAX, UINT8_MAX, UINT16_MAX,
		UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT8_MAX, UINT8_MAX };
	char *f[15], *save = NULL;
	uint64_t v[15];
	int n = 0;

	for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL;
			t = strtok_r(NULL, " \t\r\n", &save))
		if (n < 15)
			f[n++] = t;
		else
			return -1;
	if (n != 15)
		return -1;
	memset(r, 0, sizeof(*r));
	for (unsigned int k = 0; k < 5; k++)
		if (strcmp(f[0], reasons[k]) == 0)
			r->reason = (uint8_t)(k + 1);
	if (r->reason == 0)
		return -1;
	if (inet_pton(AF_INET, f[3], r->src) == 1 &&
			inet_pton(AF_INET, f[4], r->dst) == 1)
		r->family = 4;
	else if (inet_pton(AF_INET6, f[3], r->src) == 1 &&
			inet_pton(AF_INET6, f[4], r->dst) == 1)
		r->family = 6;
	else
		return -1;
	for (int k = 1; k < 15; k++)
		if (max[k] != 0 && num(f[k], max[k], &v[k]) != 0)
			return -1;
	r->first_ns = v[1];
	r->last_ns = v[2];
	r->sport = (uint16_t)v[5];
	r->dport = (uint16_t)v[6];
	r->proto = (uint8_t)v[7];
	r->tcp_flags = (uint8_t)v[8];
	r->port = (uint16_t)v[9];
	r->bytes = v[10];
	r->packets = v[11];
	r->flow_id = v[12];
	r->icmp_type = (uint8_t)v[13];
	r->icmp_code = (uint8_t)v[14];
	r->proto_class = r->proto == 1 || r->proto == 58 ? CFLOW_CLASS_ICMP :
		r->proto == 6 ? CFLOW_CLASS_TCP : r->proto == 17 ?
		CFLOW_CLASS_UDP : CFLOW_CLASS_OTHER;
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--to HOST:PORT] [--out FILE] "
		"[--domain N] [--mtu N] [--refresh S] [--refresh-msgs N] "
		"[--now S] [FILE]\n", prog);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "domain", required_argument, NULL, 'd' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "refresh", required_argument, NULL, 'r' },
		{ "refresh-msgs", required_argument, NULL, 'R' },
		{ "now", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cflow_ipfix_params p = { .emit = emit };
	struct out o = { .sock = -1, .file = NULL };
	uint64_t now = (uint64_t)time(NULL), v, records = 0;
	struct cflow_ipfix_stats st;
	struct cflow_ipfix *x;
	unsigned int lineno = 0;
	FILE *in = stdin;
	char line[512];
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *name = opts[0].name;

		for (unsigned int i = 0; opts[i].name != NULL; i++)
			if (opts[i].val == opt)
				name = opts[i].name;
		switch (opt) {
		case 't':
			o.sock = open_udp(optarg);
			if (o.sock < 0) {
				fprintf(stderr, "ipfix_send: --to %s: want a "
					"numeric HOST:PORT\n", optarg);
				return 2;
			}
			continue;
		case 'o':
			o.file = fopen(optarg, "wb");
			if (o.file == NULL) {
				fprintf(stderr, "ipfix_send: %s: %s\n", optarg,
					strerror(errno));
				return 2;
			}
			continue;
		case 'd': case 'm': case 'r': case 'R': case 'n':
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
		if (num(optarg, opt == 'm' ? UINT16_MAX : opt == 'n' ?
				UINT64_MAX : UINT32_MAX, &v) != 0) {
			fprintf(stderr, "ipfix_send: --%s %s: not a number in "
				"range\n", name, optarg);
			return 2;
		}
		if (opt == 'd')
			p.observation_domain = (uint32_t)v;
		else if (opt == 'm')
			p.mtu = (uint16_t)v;
		else if (opt == 'r')
			p.template_refresh_s = (uint32_t)v;
		else if (opt == 'R')
			p.template_refresh_msgs = (uint32_t)v;
		else
			now = v;
	}
	if (optind + 1 < argc) {
		usage(argv[0]);
		return 2;
	}
	if (optind < argc && (in = fopen(argv[optind], "r")) == NULL) {
		fprintf(stderr, "ipfix_send: %s: %s\n", argv[optind],
			strerror(errno));
		return 2;
	}
	p.emit_arg = &o;
	x = cflow_ipfix_create(&p);
	if (x == NULL) {
		fprintf(stderr, "ipfix_send: cflow_ipfix_create: %s\n",
			strerror(errno));
		return 2;
	}
	while (ret == 0 && fgets(line, sizeof(line), in) != NULL) {
		struct cflow_flow_record r;
		char *hash = strchr(line, '#');

		lineno++;
		if (hash != NULL)
			*hash = '\0';
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (parse_record(line, &r) != 0) {
			fprintf(stderr, "ipfix_send: line %u: not a record\n",
				lineno);
			ret = 2;
			break;
		}
		records++;
		if (cflow_ipfix_add(x, &r, now) < 0) {
			fprintf(stderr, "ipfix_send: line %u: %s\n", lineno,
				strerror(errno));
			ret = 1;
		}
	}
	if (ret == 0 && cflow_ipfix_flush(x, now) < 0) {
		fprintf(stderr, "ipfix_send: flush: %s\n", strerror(errno));
		ret = 1;
	}
	cflow_ipfix_stats_get(x, &st);
	printf("%" PRIu64 " records read, %" PRIu64 " messages, %" PRIu64
		" records, %" PRIu64 " bytes\n", records, st.messages,
		st.records, st.bytes);
	cflow_ipfix_free(x);
	if (o.file != NULL && fclose(o.file) != 0)
		ret = 1;
	if (o.sock >= 0)
		close(o.sock);
	if (in != stdin)
		fclose(in);
	return ret;
}
