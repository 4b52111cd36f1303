# Oracle snippet: what the real kernel runs, for the emulated kernel's call
# paths and background activity.
# Run:  cat tools/oracle/capture.sh tools/oracle/kernel-paths.sh | kernel-oracle [--series 6.12] --out OUTDIR run -
#   ps.txt            /proc/*/stat of every task (kernel threads: pids, comms, prio, cpu)
#   idle-graph.txt.gz function_graph of 0.3 s of an idle system (both CPUs)
#   idle-events.txt.gz  sched/timer/irq/workqueue/rcu/kmem/lock events over 1 s idle
#   op-*.txt.gz       function_graph of the syscalls of one operation on tracefs files
for p in /proc/[0-9]*; do cat $p/stat 2>/dev/null; echo; done | grep . > $O/ps.txt
nproc > $O/nproc.txt

echo 0 > tracing_on
echo 16384 > buffer_size_kb
echo function_graph > current_tracer
echo 1 > options/funcgraph-proc
echo 1 > options/funcgraph-abstime
echo > trace
echo 1 > tracing_on; sleep 0.3; echo 0 > tracing_on
cat trace | gzip > $O/idle-graph.txt.gz
echo nop > current_tracer
echo 1 > options/funcgraph-proc

echo > trace
for s in sched timer irq workqueue rcu lock irq_vectors; do echo 1 > events/$s/enable; done
for e in kmalloc kfree kmem_cache_alloc kmem_cache_free; do echo 1 > events/kmem/$e/enable; done
echo 1 > tracing_on; sleep 1; echo 0 > tracing_on
cat trace | gzip > $O/idle-events.txt.gz
echo 0 > events/enable
echo > trace
echo 1 > tracing_on

capture_begin ''
op cat-available_tracers 'cat available_tracers > /dev/null'
op cat-README 'cat README > /dev/null'
op echo-trace_marker 'echo hello > trace_marker'
op dynevent 'echo "p:kp1 vfs_read" >> dynamic_events; echo "-:kp1" >> dynamic_events'
op event-enable 'echo 1 > events/sched/sched_switch/enable; echo 0 > events/sched/sched_switch/enable'
op cat-set_event 'cat set_event > /dev/null'
op ls-events-sched 'ls events/sched > /dev/null'
op ls-instances 'ls instances > /dev/null'
op stat-trace 'stat trace > /dev/null'
op mkdir-instance 'mkdir instances/foo'
op rmdir-instance 'rmdir instances/foo'
op chmod 'chmod 0640 set_event; chmod 0644 set_event'
op chown 'chown 0:0 set_event'
op truncate-trace ': > trace'
op trace_pipe-interrupted 'timeout 0.5 cat trace_pipe > /dev/null'
op sh-c-true 'sh -c true'
op truncate-s0 'truncate -s 0 trace'
op cat-trace 'cat trace > /dev/null'
op cat-format 'cat events/sched/sched_switch/format > /dev/null'
op cat-enable 'cat events/sched/sched_switch/enable > /dev/null'
op cat-current_tracer 'cat current_tracer > /dev/null'
op cat-tracing_on 'cat tracing_on > /dev/null'
op cat-buffer_size_kb 'cat buffer_size_kb > /dev/null'
op echo-set_ftrace_filter 'echo vfs_read > set_ftrace_filter; echo > set_ftrace_filter'
op ls-l-sched_switch 'ls -l events/sched/sched_switch > /dev/null'
op cat-per_cpu-stats 'cat per_cpu/cpu0/stats > /dev/null'
echo nop > $C/current_tracer

# raw syscalls of the same kind of operations, for arguments and return values
echo > trace
echo $$ > set_event_pid
echo 1 > options/event-fork
echo 1 > events/raw_syscalls/enable
echo 1 > events/sched/sched_process_fork/enable
echo 1 > events/sched/sched_process_exec/enable
echo 1 > events/sched/sched_process_exit/enable
echo 1 > events/sched/sched_process_free/enable
echo 1 > events/sched/sched_process_wait/enable
echo 1 > events/sched/sched_wakeup_new/enable
echo 1 > events/sched/sched_switch/enable
cat README > /dev/null; echo hello > trace_marker; timeout 0.5 cat $C/trace_pipe > /dev/null; sh -c true; mkdir instances/bar; rmdir instances/bar
echo 0 > events/enable
cat trace | gzip > $O/syscalls.txt.gz
capture_end
