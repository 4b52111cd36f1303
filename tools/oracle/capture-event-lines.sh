# Oracle snippet: records real trace lines and the binary records behind them.
# Run:  kernel-oracle [--series 6.12] --out OUTDIR run - < tools/oracle/capture-event-lines.sh
# Then: npx tsx tools/gen-event-fixtures.ts SERIES OUTDIR  (writes test/fixtures/event-lines-SERIES.json)
#
# The top-level buffer records a chosen set of events (the ones the emulated
# kernel fires); instance "all" records every event, for breadth.
O=$KORACLE_OUT
echo 0 > tracing_on
echo 4096 > buffer_size_kb
for s in sched timer irq workqueue rcu lock raw_syscalls syscalls signal task; do
  [ -d events/$s ] && echo 1 > events/$s/enable
done
for e in kmalloc kfree kmem_cache_alloc kmem_cache_free; do echo 1 > events/kmem/$e/enable; done
mkdir instances/all
echo 4096 > instances/all/buffer_size_kb
echo 1 > instances/all/events/enable

echo 1 > tracing_on
ls / > /dev/null
sh -c true
cat /proc/self/stat > /dev/null
mkdir /tmp/xx; rmdir /tmp/xx
echo hi > /tmp/f; cat /tmp/f > /dev/null; rm /tmp/f
sleep 0.2
ping -c 1 127.0.0.1 > /dev/null 2>&1
kill -0 $$
# Interrupts of the serial port, and CPUs contending for locks
for i in 1 2 3; do echo "capture $i" > /dev/ttyS0; done
(cat /proc/kallsyms > /dev/null & cat /proc/kallsyms > /dev/null & cat /proc/kallsyms > /dev/null & wait)
echo 0 > tracing_on
echo 0 > instances/all/tracing_on
for d in . instances/all; do
  n=top; [ $d != . ] && n=all
  for c in 0 1; do
    cat $d/per_cpu/cpu$c/trace > $O/$n.trace.cpu$c
    timeout 3 cat $d/per_cpu/cpu$c/trace_pipe_raw > $O/$n.raw.cpu$c
  done
done
gzip -c /proc/kallsyms > $O/kallsyms.gz
ls -la $O
