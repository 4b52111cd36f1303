# Oracle snippet: what the real kernel runs for system calls on files outside
# tracefs (a device node, a directory, a regular file, a symlink), and for
# chdir() — the calls `tracefs-emu exec` sees through its seccomp watcher.
# Run:  cat tools/oracle/capture.sh tools/oracle/kernel-paths-host.sh | kernel-oracle [--series 6.12] --out OUTDIR run -
#   op-host-*.txt.gz  function_graph of the syscalls of one operation
#   mounts.txt        the guest's mounts (which filesystem each path was on)
mkdir -p /tmp/emu-host && echo hello > /tmp/emu-host/file
capture_begin host
op open-devnull 'echo > /dev/null'
op open-devnull-read ': < /dev/null'
op open-file 'read x < /tmp/emu-host/file'
op open-file-write 'echo hi > /tmp/emu-host/file'
op open-create 'echo hi > /tmp/emu-host/new; rm /tmp/emu-host/new'
op open-enoent 'true < /tmp/emu-host/missing 2>/dev/null'
op ls-dir 'ls /tmp/emu-host > /dev/null'
op symlink 'ln -s foo /tmp/emu-host/bar; rm /tmp/emu-host/bar'
op symlink-eexist 'ln -s foo /tmp/emu-host/file 2>/dev/null || true'
op chdir 'cd /tmp/emu-host; cd /sys/kernel/tracing; cd /sys/kernel/tracing'
op chdir-enoent '(cd /tmp/emu-host/missing 2>/dev/null) || true'
capture_end
