# Oracle snippet: the errno of refused writes to event files (busybox echo prints strerror).
# Run: kernel-oracle [--series 6.12] run - < tools/oracle/event-errnos.sh
e() { f=$1; shift; printf '%s => ' "$*"; busybox echo "$*" > $f 2>/tmp/err && echo ok || sed 's/.*write error: //' /tmp/err; }
F=events/sched/sched_switch/filter
e $F 'foo == 1'
e $F '(prev_pid == 1'
e $F 'prev_pid == 1)'
e $F 'prev_comm == "foo'
e $F 'prev_pid = 1'
e $F '== 1'
e $F '()'
e $F 'prev_pid == 1 prev_pid == 2'
e $F 'prev_pid == 99999999999999999999'
e $F 'prev_pid == 1 &&'
e $F 'prev_pid == 1 ||| prev_pid == 2'
cat $F
e $F '0'
e events/sched/filter 'nofield == 1'
e events/sched/filter '0'
T=events/sched/sched_switch/trigger
e $T 'traceoff:badparam'
e $T 'traceoff+0'
e $T 'nosuch'
e $T 'traceoff if a'
e $T 'traceoff if'
e $T 'enable_event'
e $T 'enable_event:sched'
e $T 'enable_event:nogroup:noevent'
e $T 'enable_event:ftrace:print'
e $T 'traceon'
e $T 'traceon'
e $T 'traceoff'
e $T '!traceon'
e $T '!traceon'
e $T 'hist:keys=prev_pid'
cat $T
e $T '!hist:keys=prev_pid'
e $T 'traceoff:5x'
e $T 'traceoff:-1'
e set_event 'nosuch:event'
e set_event '*'
e set_event ':mod:foo'
e events/sched/sched_switch/enable '2'
e events/sched/sched_switch/enable 'abc'
e events/enable '2'
e set_event_pid 'abc'
e set_event_pid '99999999999'
e set_event_pid '-1'
e set_event_pid '1073741824'
e set_event_pid '1073741823'
cat set_event_pid
echo > set_event_pid
e syscall_user_buf_size 500
cat syscall_user_buf_size 2>&1
e syscall_user_buf_size abc
echo 63 > syscall_user_buf_size 2>/dev/null
e events/sched/sched_switch/id 1
e events/sched/sched_switch/format x
e events/header_page x
cat error_log
echo "--- readdir order"
ls -f events/sched | head -5
ls -f events/sched/sched_switch
ls -f events | head -8
