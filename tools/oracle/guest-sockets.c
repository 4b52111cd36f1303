/*
 * Makes the socket system calls of one protocol, each one a known number of
 * times, for kernel-paths-calls.sh's capture (the guest's busybox has no tool
 * that calls accept4, sendmsg or getsockopt on demand). Built static on the
 * host by guest-binary.sh and shipped in the job script.
 *
 *   sockets unix-stream PATH | unix-dgram PATH | udp | udp6 | tcp | tcp6
 *
 * (installed as /tmp/sockets: its comm, `sockets`, fits the trace's column).
 *
 * One process plays both ends: over loopback every call finds its peer's
 * data already queued, so none of the traced trees sleeps. Clients are bound
 * before they send (the steady state, not an autobind), and connected
 * sockets are closed before the listener. The whole is done ROUNDS times:
 * under the oracle's emulated CPU a timer tick or a first-touch page fault
 * lands in many calls, and calls.mjs takes the first call that none hit.
 * A failed call is reported on stderr and ends the program.
 */
#define _GNU_SOURCE /* accept4, sendmmsg, recvmmsg */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ROUNDS 3

static int check(long r, const char *what)
{
	if (r < 0) {
		perror(what);
		exit(1);
	}
	return (int)r;
}

union addr {
	struct sockaddr sa;
	struct sockaddr_un un;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* The loopback address of the family (port 0: the kernel picks one), or a unix path. */
static socklen_t addr_of(int family, const char *path, union addr *a)
{
	memset(a, 0, sizeof(*a));
	a->sa.sa_family = (sa_family_t)family;
	if (family == AF_UNIX) {
		strncpy(a->un.sun_path, path, sizeof(a->un.sun_path) - 1);
		unlink(path);
		return sizeof(a->un);
	}
	if (family == AF_INET) {
		a->in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(a->in);
	}
	a->in6.sin6_addr = in6addr_loopback;
	return sizeof(a->in6);
}

static char buf[256];

static void send_msg(int fd, const char *text, const union addr *to, socklen_t len)
{
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = to ? len : 0, .msg_iov = &iov, .msg_iovlen = 1 };
	check(sendmsg(fd, &m, 0), "sendmsg");
}

static void recv_msg(int fd)
{
	union addr from;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
	check(recvmsg(fd, &m, 0), "recvmsg");
}

/* A listener and two connections to it, accepted by accept and accept4. */
static void stream(int family, const char *path)
{
	union addr a, peer;
	socklen_t len = addr_of(family, path, &a), plen = sizeof(peer);
	int one = 1;
	int s = check(socket(family, SOCK_STREAM, 0), "socket");
	if (family != AF_UNIX)
		check(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), "setsockopt");
	check(bind(s, &a.sa, len), "bind");
	check(listen(s, 8), "listen");
	check(getsockname(s, &a.sa, &len), "getsockname");
	int c = check(socket(family, SOCK_STREAM, 0), "socket");
	check(connect(c, &a.sa, len), "connect");
	int x = check(accept(s, &peer.sa, &plen), "accept");
	int c2 = check(socket(family, SOCK_STREAM, 0), "socket");
	check(connect(c2, &a.sa, len), "connect");
	plen = sizeof(peer);
	int x2 = check(accept4(s, &peer.sa, &plen, SOCK_CLOEXEC), "accept4");
	plen = sizeof(peer);
	check(getpeername(x, &peer.sa, &plen), "getpeername");
	socklen_t olen = sizeof(one);
	check(getsockopt(c, SOL_SOCKET, SO_ERROR, &one, &olen), "getsockopt");
	check(sendto(c, "ping", 4, 0, NULL, 0), "sendto");
	check(recvfrom(x, buf, sizeof(buf), 0, NULL, NULL), "recvfrom");
	send_msg(x, "pong", NULL, 0);
	recv_msg(c);
	check(write(c, "data", 4), "write");
	check(read(x, buf, sizeof(buf)), "read");
	check(shutdown(c, SHUT_WR), "shutdown");
	close(x);
	close(c);
	close(x2);
	close(c2);
	close(s);
	if (family == AF_UNIX) {
		int pair[2];
		check(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), "socketpair");
		unlink(path);
	}
}

/* A bound server and a bound client: sendto/recvfrom, then connected write/read, sendmsg/recvmsg, sendmmsg/recvmmsg. */
static void dgram(int family, const char *path, const char *cpath)
{
	union addr a, ca, from;
	socklen_t len = addr_of(family, path, &a), clen = addr_of(family, cpath, &ca), flen = sizeof(from);
	int s = check(socket(family, SOCK_DGRAM, 0), "socket");
	check(bind(s, &a.sa, len), "bind");
	check(getsockname(s, &a.sa, &len), "getsockname");
	int c = check(socket(family, SOCK_DGRAM, 0), "socket");
	check(bind(c, &ca.sa, clen), "bind");
	int one = 1 << 16;
	check(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)), "setsockopt");
	socklen_t olen = sizeof(one);
	check(getsockopt(s, SOL_SOCKET, SO_RCVBUF, &one, &olen), "getsockopt");
	check(sendto(c, "ping", 4, 0, &a.sa, len), "sendto");
	check(recvfrom(s, buf, sizeof(buf), 0, &from.sa, &flen), "recvfrom");
	check(connect(c, &a.sa, len), "connect");
	flen = sizeof(from);
	check(getpeername(c, &from.sa, &flen), "getpeername");
	check(write(c, "data", 4), "write");
	check(read(s, buf, sizeof(buf)), "read");
	send_msg(c, "msg", NULL, 0);
	recv_msg(s);
	struct iovec iov[2] = { { .iov_base = "one", .iov_len = 3 }, { .iov_base = "two", .iov_len = 3 } };
	struct mmsghdr mm[2] = { { .msg_hdr = { .msg_iov = &iov[0], .msg_iovlen = 1 } }, { .msg_hdr = { .msg_iov = &iov[1], .msg_iovlen = 1 } } };
	check(sendmmsg(c, mm, 2, 0), "sendmmsg");
	char b1[16], b2[16];
	struct iovec riov[2] = { { .iov_base = b1, .iov_len = sizeof(b1) }, { .iov_base = b2, .iov_len = sizeof(b2) } };
	struct mmsghdr rm[2] = { { .msg_hdr = { .msg_iov = &riov[0], .msg_iovlen = 1 } }, { .msg_hdr = { .msg_iov = &riov[1], .msg_iovlen = 1 } } };
	check(recvmmsg(s, rm, 2, MSG_DONTWAIT, NULL), "recvmmsg");
	check(shutdown(c, SHUT_RDWR), "shutdown");
	close(c);
	close(s);
	if (family == AF_UNIX) {
		unlink(path);
		unlink(cpath);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *path = argc > 2 ? argv[2] : "";
	char cpath[108];
	snprintf(cpath, sizeof(cpath), "%s.c", path);
	for (int i = 0; i < ROUNDS; i++) {
		if (!strcmp(mode, "unix-stream"))
			stream(AF_UNIX, path);
		else if (!strcmp(mode, "unix-dgram"))
			dgram(AF_UNIX, path, cpath);
		else if (!strcmp(mode, "udp"))
			dgram(AF_INET, "", "");
		else if (!strcmp(mode, "udp6"))
			dgram(AF_INET6, "", "");
		else if (!strcmp(mode, "tcp"))
			stream(AF_INET, "");
		else if (!strcmp(mode, "tcp6"))
			stream(AF_INET6, "");
		else {
			fprintf(stderr, "usage: sockets unix-stream PATH | unix-dgram PATH | udp | udp6 | tcp | tcp6\n");
			return 2;
		}
	}
	return 0;
}
