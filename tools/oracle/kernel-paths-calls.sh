# Oracle snippet: what the real kernel runs for the system calls every
# program makes, on the kinds of file they are made on (a regular file, a
# pipe, /dev/null, a directory) — what `tracefs-emu exec`'s watcher traces
# and src/host/traced_calls.ts replays.
# Run:  kernel-oracle [--series 6.12] --out OUTDIR run - < tools/oracle/kernel-paths-calls.sh
#   op-calls-*.txt.gz  function_graph of the system calls of one operation
#   mounts.txt         the guest's mounts (which filesystem each path was on)
O=$KORACLE_OUT
cat /proc/mounts > $O/mounts.txt
mkdir -p /tmp/emu-calls && echo hello > /tmp/emu-calls/file
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
  cat $C/trace | gzip > $O/op-calls-$name.txt.gz
}
op cat-file 'cat /tmp/emu-calls/file > /dev/null'
op dd-file 'dd if=/tmp/emu-calls/file of=/dev/null bs=4096 2>/dev/null'
op cat-pipe 'echo hi | cat > /dev/null'
op cat-null 'cat /dev/null'
op ls-dir 'ls /tmp/emu-calls > /dev/null'
echo nop > $C/current_tracer
rmdir $C
ls -la $O
