# Oracle snippet: what the real kernel runs for the system calls every
# program makes, on the kinds of file they are made on (a regular file, a
# pipe, /dev/null, a directory) — what `tracefs-emu exec`'s watcher traces
# and src/host/traced_calls.ts replays.
# Run:  cat tools/oracle/capture.sh tools/oracle/kernel-paths-calls.sh | kernel-oracle [--series 6.12] --out OUTDIR run -
#   op-calls-*.txt.gz  function_graph of the system calls of one operation
#   mounts.txt         the guest's mounts (which filesystem each path was on)
mkdir -p /tmp/emu-calls && echo hello > /tmp/emu-calls/file
capture_begin calls
op cat-file 'cat /tmp/emu-calls/file > /dev/null'
op dd-file 'dd if=/tmp/emu-calls/file of=/dev/null bs=4096 2>/dev/null'
op cat-pipe 'echo hi | cat > /dev/null'
op cat-null 'cat /dev/null'
op ls-dir 'ls /tmp/emu-calls > /dev/null'
capture_end
