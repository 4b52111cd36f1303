# Oracle snippet: what the real kernel runs for the system calls every
# program makes, on the kinds of file they are made on (a regular file, a
# pipe, /dev/null, a directory) — what `tracefs-emu exec`'s watcher traces
# and src/host/traced_calls.ts replays; and on a TCP socket (busybox nc over
# loopback) and a terminal (a shell busybox telnetd runs on a pseudo-terminal);
# and the socket system calls on unix (stream, datagram), UDP and TCP sockets
# over loopback (IPv4, IPv6), made by guest-sockets.c; and the other calls
# programs make (memory, signals, identity, clocks, sleeps, fd and path
# calls on tmpfs, a pipe, /dev/null, a terminal), made by guest-calls.c.
# The job carries both:
# Run:  { cat tools/oracle/capture.sh
#         sh tools/oracle/guest-binary.sh tools/oracle/guest-sockets.c /tmp/sockets
#         sh tools/oracle/guest-binary.sh tools/oracle/guest-calls.c /tmp/calls
#         cat tools/oracle/kernel-paths-calls.sh; } | kernel-oracle [--series 6.12] --out OUTDIR run -
#   op-calls-*.txt.gz  function_graph of the system calls of one operation
#   mounts.txt         the guest's mounts (which filesystem each path was on)
mkdir -p /tmp/emu-calls && echo hello > /tmp/emu-calls/file
capture_begin calls
op cat-file 'cat /tmp/emu-calls/file > /dev/null'
op dd-file 'dd if=/tmp/emu-calls/file of=/dev/null bs=4096 2>/dev/null'
op cat-pipe 'echo hi | cat > /dev/null'
op cat-null 'cat /dev/null'
op ls-dir 'ls /tmp/emu-calls > /dev/null'
op nc-tcp 'nc -l -p 5555 > /dev/null & sleep 1; echo hi | nc 127.0.0.1 5555; wait'
telnetd -l /bin/sh -b 127.0.0.1:2323
op tty-pty '(sleep 0.5; echo "head -c 1 > /dev/null"; sleep 0.5; echo x; sleep 0.5; echo "cat /tmp/emu-calls/file"; sleep 0.5; echo exit) | telnet 127.0.0.1 2323 > /dev/null 2>&1; sleep 1'
killall telnetd
for m in unix-stream unix-dgram udp udp6 tcp tcp6; do
  op sock-$m "/tmp/sockets $m /tmp/emu-calls/sock"
done
for m in mem sig proc sleep pty; do
  op c-$m "/tmp/calls $m"
done
for m in file paths pipe null; do
  op c-$m "/tmp/calls $m /tmp/emu-calls"
done
capture_end
