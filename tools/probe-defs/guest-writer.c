/*
 * Runs the rows of the differential table inside the oracle's guest without a
 * fork per step (a shell spends most of a TCG boot starting cat, grep and awk).
 * Built static on the host by collect.mjs and shipped in the job script.
 *
 * Reads the rows from stdin (cwd is the tracefs root), one line each:
 *   R <index>                 a new row: clear the dynamic events
 *   S <file> <hex bytes>      a setup write
 *   D <file> <hex bytes>      the row's write, then what it left
 * `{{ADDR:sym}}` in a write becomes the symbol's address from /proc/kallsyms
 * (told as `@@ADDR sym address`).
 * Prints the markers collect.mjs parses (@@ROW, @@ADDR, @@SETUP, @@DEF,
 * @@WRITE, @@ERRNO n, @@ERRLOG, @@DYN, @@FILE, @@FMT, @@END), flushed per row.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len) {
	int fd = open(path, O_RDONLY);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	if (fd >= 0) {
		for (;;) {
			if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
			ssize_t r = read(fd, buf + n, cap - n);
			if (r <= 0) break;
			n += r;
		}
		close(fd);
	}
	buf[n] = 0;
	if (len) *len = n;
	return buf;
}

static char *kallsyms;

/* The address of a symbol, as "0x..." (empty when it is not there). */
static void addr_of(const char *sym, size_t symlen, char *out) {
	if (!kallsyms) kallsyms = slurp("/proc/kallsyms", NULL);
	out[0] = 0;
	for (char *l = kallsyms; *l; ) {
		char *nl = strchr(l, '\n');
		char *name = l + 16 + 3;
		if (nl && nl - l > 19 && (size_t)(nl - name) >= symlen && strncmp(name, sym, symlen) == 0 &&
		    (name[symlen] == '\n' || name[symlen] == '\t')) {
			memcpy(out, "0x", 2);
			memcpy(out + 2, l, 16);
			out[18] = 0;
			return;
		}
		if (!nl) break;
		l = nl + 1;
	}
}

/* Decodes hex, expanding {{ADDR:sym}}. */
static char *decode(const char *hex, size_t *len) {
	size_t n = strlen(hex) / 2;
	char *raw = malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		char b[3] = { hex[2 * i], hex[2 * i + 1], 0 };
		raw[i] = (char)strtoul(b, NULL, 16);
	}
	raw[n] = 0;
	char *out = malloc(n * 4 + 64);
	size_t o = 0;
	for (size_t i = 0; i < n; ) {
		if (strncmp(raw + i, "{{ADDR:", 7) == 0) {
			char *end = strstr(raw + i, "}}");
			if (end) {
				char a[32];
				addr_of(raw + i + 7, end - (raw + i + 7), a);
				printf("@@ADDR %.*s %s\n", (int)(end - (raw + i + 7)), raw + i + 7, a);
				memcpy(out + o, a, strlen(a));
				o += strlen(a);
				i = end + 2 - raw;
				continue;
			}
		}
		out[o++] = raw[i++];
	}
	free(raw);
	*len = o;
	return out;
}

/* One write(2) of the whole command, as `cat file >> FILE` does for short ones. */
static int put(const char *file, const char *buf, size_t len, int flags) {
	int fd = open(file, O_WRONLY | flags);
	if (fd < 0) return errno;
	int err = 0;
	if (len && write(fd, buf, len) < 0) err = errno;
	close(fd);
	return err;
}

static void out(const char *s, size_t n) { fwrite(s, 1, n, stdout); }

/* Clears every dynamic event: eprobes first (newest first: they may sit on each other), then the rest. */
static void reset(void) {
	for (int round = 0; round < 8; round++) {
		char *dyn = slurp("dynamic_events", NULL);
		char *lines[4096];
		int nl = 0;
		for (char *l = dyn; *l && nl < 4096; ) {
			char *e = strchr(l, '\n');
			if (e) *e = 0;
			if (l[0] == 'e' && l[1] == ':') lines[nl++] = l;
			if (!e) break;
			l = e + 1;
		}
		for (int i = nl - 1; i >= 0; i--) {
			char cmd[512];
			char *sp = strchr(lines[i], ' ');
			if (sp) *sp = 0;
			int n = snprintf(cmd, sizeof cmd, "-:%s", lines[i] + 2);
			put("dynamic_events", cmd, n, O_APPEND);
		}
		free(dyn);
		if (nl == 0) break;
	}
	if (put("dynamic_events", "\n", 1, O_TRUNC)) printf("@@RESETFAIL\n");
}

int main(void) {
	static char line[1 << 20];
	char *before = NULL;
	char uts[256];
	char *rel = slurp("/proc/sys/kernel/osrelease", NULL);
	rel[strcspn(rel, "\n")] = 0;
	snprintf(uts, sizeof uts, "%s", rel);
	printf("@@KERNEL %s %ld\n", uts, sysconf(_SC_NPROCESSORS_ONLN));
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		char kind = line[0];
		if (kind == 'R') {
			printf("@@ROW %s\n", line + 2);
			reset();
			continue;
		}
		char *file = line + 2;
		char *hex = strchr(file, ' ');
		if (!hex) continue;
		*hex++ = 0;
		size_t len;
		char *def = decode(hex, &len);
		if (kind == 'S') {
			printf("@@SETUP\n@@ERRNO %d\n", put(file, def, len, O_APPEND));
			free(def);
			continue;
		}
		free(before);
		before = slurp("dynamic_events", NULL);
		put("error_log", "", 0, O_TRUNC);
		printf("@@DEF\n");
		out(def, len);
		printf("\n@@WRITE\n@@ERRNO %d\n", put(file, def, len, O_APPEND));
		free(def);
		size_t n;
		char *s = slurp("error_log", &n);
		printf("@@ERRLOG\n");
		out(s, n);
		free(s);
		char *dyn = slurp("dynamic_events", &n);
		printf("@@DYN\n");
		out(dyn, n);
		if (strcmp(file, "dynamic_events") != 0) {
			s = slurp(file, &n);
			printf("@@FILE\n");
			out(s, n);
			free(s);
		}
		/* formats of the events this write added */
		for (char *l = dyn; *l; ) {
			char *e = strchr(l, '\n');
			if (e) *e = 0;
			int seen = 0;
			size_t ll = strlen(l);
			for (char *b = before; *b; ) {
				char *be = strchr(b, '\n');
				size_t bl = be ? (size_t)(be - b) : strlen(b);
				if (bl == ll && strncmp(b, l, ll) == 0) { seen = 1; break; }
				if (!be) break;
				b = be + 1;
			}
			if (!seen) {
				char *sp = strchr(l, ' ');
				if (sp) *sp = 0;
				char *key = strchr(l, ':');
				if (key) {
					char path[1024];
					key++;
					snprintf(path, sizeof path, "events/%s/format", key);
					s = slurp(path, &n);
					printf("@@FMT %s\n", key);
					out(s, n);
					free(s);
				}
			}
			if (!e) break;
			l = e + 1;
		}
		free(dyn);
		printf("@@END\n");
		fflush(stdout);
	}
	printf("@@DONE\n");
	return 0;
}
