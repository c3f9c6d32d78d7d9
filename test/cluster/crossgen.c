/* SPDX-License-Identifier: BSD-3-Clause */
/* crossgen: tiny traffic tool for the emulated cloud (test/cluster/).
 *
 * Compiled on the fly by cluster.sh (cc -O2 -o crossgen crossgen.c); needs
 * only libc.  Modes:
 *
 *   crossgen serve PORT
 *       TCP discard server (one child per connection) and UDP echo server on
 *       the same port number.  Runs until killed.
 *   crossgen bulk HOST PORT RATE_BPS ON_MS OFF_MS [SEED [EPOCH]]
 *       Bursty cross traffic: a TCP connection to HOST:PORT that alternates
 *       ON periods (sending paced at RATE_BPS bit/s, 0 = as fast as TCP
 *       allows) and OFF periods (silent).  ON and OFF lengths are drawn from
 *       exponential distributions with means ON_MS and OFF_MS, which gives
 *       heavy-ish queueing tails.  Reconnects if the connection drops.
 *       EPOCH (CLOCK_REALTIME seconds, default now) is when the first ON
 *       period starts; flows with the same SEED and EPOCH turn on together.
 *   crossgen send HOST PORT BYTES
 *       Send BYTES over one TCP connection, half-close, wait for the server
 *       to close, print "bytes=B secs=S mbit=M".
 *   crossgen probe HOST PORT COUNT INTERVAL_US [WAIT_MS]
 *       Send COUNT numbered UDP datagrams (64 bytes) to an echo server,
 *       INTERVAL_US apart, wait WAIT_MS (default 500) for late replies, print
 *       "sent=N received=M rtt_loss=X oneway_loss=Y" where Y = 1-sqrt(M/N)
 *       assumes the same independent loss in both directions.
 *
 * Exit status: 0 on success, 1 on error, 2 on usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts;
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int make_addr(const char *host, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		fprintf(stderr, "crossgen: bad IPv4 address '%s'\n", host);
		return -1;
	}
	return 0;
}

static int tcp_connect(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int do_serve(const char *port)
{
	struct sockaddr_in sa;
	int one = 1;
	pid_t pid;

	signal(SIGCHLD, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (make_addr("0.0.0.0", port, &sa) != 0)
		return 1;

	pid = fork();
	if (pid < 0) {
		perror("crossgen: fork");
		return 1;
	}
	if (pid == 0) { /* UDP echo */
		char buf[65536];
		int u = socket(AF_INET, SOCK_DGRAM, 0);
		if (u < 0 || bind(u, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			perror("crossgen: udp bind");
			_exit(1);
		}
		for (;;) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
			if (n < 0)
				continue;
			(void)sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
	}

	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0) {
		perror("crossgen: socket");
		return 1;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 64) != 0) {
		perror("crossgen: tcp bind/listen");
		kill(pid, SIGTERM);
		return 1;
	}
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		pid_t ch = fork();
		if (ch == 0) {
			static char buf[65536];
			close(l);
			while (read(c, buf, sizeof(buf)) > 0)
				;
			close(c);
			_exit(0);
		}
		close(c);
	}
}

static double exp_draw(double mean)
{
	double u = ((double)random() + 1.0) / ((double)RAND_MAX + 2.0);
	return -mean * log(u);
}

static double realtime_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The ON/OFF schedule is laid on the wall clock from EPOCH, so flows given the
 * same SEED and EPOCH are ON at the same moments (one machine, one clock) and
 * a reconnect or a slow write does not shift the later periods. */
static int do_bulk(int argc, char **argv)
{
	struct sockaddr_in sa;
	static char buf[16384];
	double rate, on_ms, off_ms, on_start, on_end, off_end;
	unsigned seed;
	int fd = -1;

	if (argc < 5)
		return 2;
	if (make_addr(argv[0], argv[1], &sa) != 0)
		return 1;
	rate = atof(argv[2]);
	on_ms = atof(argv[3]);
	off_ms = atof(argv[4]);
	seed = argc > 5 ? (unsigned)strtoul(argv[5], NULL, 10)
	                : (unsigned)getpid() ^ (unsigned)time(NULL);
	on_start = argc > 6 ? atof(argv[6]) : realtime_s();
	srandom(seed);
	signal(SIGPIPE, SIG_IGN);
	memset(buf, 0x5a, sizeof(buf));

	for (;; on_start = off_end) {
		double sent = 0;
		on_end = on_start + exp_draw(on_ms) / 1000.0;
		off_end = on_end + exp_draw(off_ms) / 1000.0;
		sleep_s(on_start - realtime_s());
		while (realtime_s() < on_end) {
			double t = realtime_s();
			if (fd < 0 && (fd = tcp_connect(&sa)) < 0) {
				sleep_s(0.1);
				continue;
			}
			if (rate > 0) {
				double due = on_start + sent * 8.0 / rate;
				if (due > t)
					sleep_s(due - t);
			}
			if (write_all(fd, buf, sizeof(buf)) != 0) {
				close(fd);
				fd = -1;
				continue;
			}
			sent += sizeof(buf);
		}
		sleep_s(off_end - realtime_s());
	}
}

static int do_send(int argc, char **argv)
{
	struct sockaddr_in sa;
	static char buf[65536];
	long long total, left;
	double t0, t1;
	int fd;

	if (argc < 3)
		return 2;
	if (make_addr(argv[0], argv[1], &sa) != 0)
		return 1;
	total = left = atoll(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	memset(buf, 0xa5, sizeof(buf));
	t0 = now_s();
	fd = tcp_connect(&sa);
	if (fd < 0) {
		perror("crossgen: connect");
		return 1;
	}
	while (left > 0) {
		size_t n = left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf);
		if (write_all(fd, buf, n) != 0) {
			perror("crossgen: write");
			return 1;
		}
		left -= (long long)n;
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, buf, sizeof(buf)) > 0) /* server closes after EOF */
		;
	t1 = now_s();
	close(fd);
	printf("bytes=%lld secs=%.4f mbit=%.2f\n", total, t1 - t0,
	       (double)total * 8.0 / (t1 - t0) / 1e6);
	return 0;
}

static int do_probe(int argc, char **argv)
{
	struct sockaddr_in sa;
	long count, interval_us, wait_ms = 500, sent = 0, received = 0, i;
	unsigned char *seen;
	char buf[64];
	double next, deadline = 0;
	int fd;

	if (argc < 4)
		return 2;
	if (make_addr(argv[0], argv[1], &sa) != 0)
		return 1;
	count = atol(argv[2]);
	interval_us = atol(argv[3]);
	if (argc > 4)
		wait_ms = atol(argv[4]);
	if (count <= 0)
		return 2;
	seen = calloc((size_t)count, 1);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (!seen || fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("crossgen: udp");
		return 1;
	}
	next = now_s();
	for (;;) {
		double t = now_s();
		if (sent < count && t >= next) {
			memset(buf, 0, sizeof(buf));
			memcpy(buf, &sent, sizeof(sent));
			(void)send(fd, buf, sizeof(buf), 0);
			sent++;
			next += (double)interval_us * 1e-6;
			if (sent == count)
				deadline = now_s() + (double)wait_ms / 1000.0;
			continue;
		}
		if (sent == count && t >= deadline)
			break;
		double until = sent < count ? next : deadline;
		int ms = (int)((until - t) * 1000.0);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, ms < 0 ? 0 : ms) > 0) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);
			if (n >= (ssize_t)sizeof(i)) {
				memcpy(&i, buf, sizeof(i));
				if (i >= 0 && i < count && !seen[i]) {
					seen[i] = 1;
					received++;
				}
			}
		}
	}
	double rtt_loss = 1.0 - (double)received / (double)sent;
	printf("sent=%ld received=%ld rtt_loss=%.4f oneway_loss=%.4f\n", sent, received, rtt_loss,
	       1.0 - sqrt((double)received / (double)sent));
	free(seen);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: crossgen serve PORT\n"
	                "       crossgen bulk HOST PORT RATE_BPS ON_MS OFF_MS [SEED [EPOCH]]\n"
	                "       crossgen send HOST PORT BYTES\n"
	                "       crossgen probe HOST PORT COUNT INTERVAL_US [WAIT_MS]\n");
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc >= 3 && strcmp(argv[1], "serve") == 0)
		rc = do_serve(argv[2]);
	else if (argc >= 2 && strcmp(argv[1], "bulk") == 0)
		rc = do_bulk(argc - 2, argv + 2);
	else if (argc >= 2 && strcmp(argv[1], "send") == 0)
		rc = do_send(argc - 2, argv + 2);
	else if (argc >= 2 && strcmp(argv[1], "probe") == 0)
		rc = do_probe(argc - 2, argv + 2);
	if (rc == 2)
		usage();
	return rc;
}
