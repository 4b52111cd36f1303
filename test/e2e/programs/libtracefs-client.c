/*
 * A libtracefs client as tools are: it never names the tracing directory,
 * libtracefs finds it (in the mount table) for every call. Each step prints
 * one line, "STEP ok" or "STEP failed: why"; the exit status is the number
 * of failed steps.
 *
 *   libtracefs-client UPROBE_FILE UPROBE_OFFSET
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>
#include <unistd.h>

static int failed;

static void step(const char *name, int ok)
{
	if (ok)
		printf("%s ok\n", name);
	else {
		printf("%s failed: %s\n", name, strerror(errno));
		failed++;
	}
}

/* Whether the tracing directory has PATH (relative), as a file or a directory. */
static int exists(const char *path)
{
	char *full = tracefs_get_tracing_file(path);
	int r = full && access(full, F_OK) == 0;
	tracefs_put_tracing_file(full);
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s UPROBE_FILE UPROBE_OFFSET\n", argv[0]);
		return 2;
	}
	const char *dir = tracefs_tracing_dir();
	printf("tracing_dir %s\n", dir ? dir : "(null)");
	if (!dir)
		return 1;

	struct tracefs_instance *inst = tracefs_instance_create("libtracefs_client");
	step("instance_create", inst && tracefs_instance_exists("libtracefs_client") && exists("instances/libtracefs_client/trace"));
	step("instance_destroy", inst && tracefs_instance_destroy(inst) == 0 && !tracefs_instance_exists("libtracefs_client"));
	tracefs_instance_free(inst);

	struct tep_handle *tep = tracefs_local_events(NULL);
	step("local_events", tep != NULL);
	struct tracefs_synth *synth = tep ? tracefs_synth_alloc(tep, "client_wakeup_lat", "sched", "sched_waking", "sched", "sched_switch", "pid", "next_pid", "pid") : NULL;
	step("synth_alloc", synth != NULL);
	step("synth_create", synth && tracefs_synth_add_end_field(synth, "prev_prio", "prio") == 0 && tracefs_synth_create(synth) == 0 && exists("events/synthetic/client_wakeup_lat/format"));
	step("synth_destroy", synth && tracefs_synth_destroy(synth) == 0 && !exists("events/synthetic/client_wakeup_lat"));
	tracefs_synth_free(synth);

	struct tracefs_dynevent *ep = tracefs_eprobe_alloc("client", "openat", "syscalls", "sys_enter_openat", "name=+0($filename):ustring");
	step("eprobe_create", ep && tracefs_dynevent_create(ep) == 0 && exists("events/client/openat/format"));
	step("eprobe_destroy", ep && tracefs_dynevent_destroy(ep, false) == 0 && !exists("events/client/openat"));
	tracefs_dynevent_free(ep);

	struct tracefs_dynevent *up = tracefs_uprobe_alloc("client", "entry", argv[1], strtoull(argv[2], NULL, 0), NULL);
	step("uprobe_create", up && tracefs_dynevent_create(up) == 0 && exists("events/client/entry/format"));
	step("uprobe_destroy", up && tracefs_dynevent_destroy(up, false) == 0 && !exists("events/client/entry"));
	tracefs_dynevent_free(up);

	tep_free(tep);
	return failed;
}
