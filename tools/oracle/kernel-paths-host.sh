# Oracle snippet: what the real kernel runs for system calls on files outside
# tracefs (a device node, a directory, a regular file, a symlink), and for
# chdir() — the calls `tracefs-emu exec` sees through its seccomp watcher.
# Run:  kernel-oracle [--series 6.12] --out OUTDIR run - < tools/oracle/kernel-paths-host.sh
#   op-host-*.txt.gz  function_graph of the syscalls of one operation
#   mounts.txt        the guest's mounts (which filesystem each path was on)
O=$KORACLE_OUT
cat /proc/mounts > $O/mounts.txt
mkdir -p /tmp/emu-host && echo hello > /tmp/emu-host/file
mkdir instances/cap
C=instances/cap
echo 16384 > $C/buffer_size_kb
echo 1 > $C/options/function-fork
echo 1 > $C/options/funcgraph-proc
echo $$ > $C/set_ftrace_pid
echo function_graph > $C/current_tracer
op() {
  name=$1; shift
  echo > $C/trace
  echo 1 > $C/tracing_on
  eval "$@"
  echo 0 > $C/tracing_on
  cat $C/trace | gzip > $O/op-host-$name.txt.gz
}
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
echo nop > $C/current_tracer
rmdir $C
ls -la $O
