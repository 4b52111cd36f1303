// The probe definitions of the differential table: every probe type, valid
// and invalid, written to a real kernel by collect.mjs. Each row is one write
// after the dynamic events were cleared and `setup` (if any) was written.
//
// Row: { section, file, def, setup?: [{file, def}], note? }
//   file:  dynamic_events | kprobe_events | uprobe_events | synthetic_events
//   def:   the command written (no trailing newline, as ftracetest's
//          ftrace_errlog_check writes it). `{{ADDR:sym}}` is replaced in the
//          guest by the symbol's address (0x...).
//   setup: definitions written before it (their results are recorded too).

const D = 'dynamic_events';
const K = 'kprobe_events';
const U = 'uprobe_events';
const S = 'synthetic_events';

const FORK = 'kernel_clone';
const LONG65 = '12345678901234567890123456789012345678901234567890123456789012345';
const NAME63 = 'e'.repeat(63);
const NAME64 = 'e'.repeat(64);
const UPATH = '/bin/sh';
const UOFF = '0x4760'; // /bin/sh (dash) entry point, from readelf in the guest
const LONGFN = 'ZSTD_decompressSequencesSplitLitBuffer_default.constprop.0';
const NONUNIQ = 'active_show';
const BLACKLISTED = 'atomic_notifier_call_chain'; // traceable but in the kprobe blacklist
const NOTRACE = 'native_sched_clock';

const rows = [];
let section = '';
const sec = (name) => { section = name; };
const add = (file, def, extra = {}) => rows.push({ section, file, def, ...extra });
const setupOf = (...defs) => defs.map((d) => (typeof d === 'string' ? { file: D, def: d } : d));

const imms = (n, first = 1) => Array.from({ length: n }, (_, i) => `\\${first + i}`).join(' ');

// ---------------------------------------------------------------- kprobe
// kprobe/kprobe_syntax_errors.tc, through kprobe_events
sec('kprobe-syntax');
for (const d of [
  'p100 vfs_read', 'r1a111 vfs_read', 'r100000 vfs_read',
  'p non_exist_func', 'p hoge-fuga', 'p hoge+1000-1000', 'r vfs_read+10',
  'p:/bar vfs_read', `p:${LONG65}/bar vfs_read`, 'p:foo.1/bar vfs_read', 'p: vfs_read',
  `p:foo/${LONG65} vfs_read`, 'p:foo/bar.1 vfs_read',
  'p vfs_read $retval', 'p vfs_read $stack10000', 'p vfs_read $arg10000', 'p vfs_read $none_var',
  'p vfs_read %none_reg', 'p vfs_read @12345678abcde', 'p vfs_read @+10',
  String.raw`p vfs_read arg1=\x`, String.raw`p vfs_read arg1=\"abcd`,
  'p vfs_read +0@0)', 'p vfs_read +0ab1(@0)', 'p vfs_read +0(+0(@0)', 'p vfs_read +0($comm)', 'p vfs_read &1',
  'p vfs_read +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))',
  'p vfs_read +0(@11):u8[10', 'p vfs_read +0(@11):u8[10]a', 'p vfs_read +0(@11):u8[10a]', 'p vfs_read +0(@11):u8[256]',
  'p vfs_read @11:unknown_type', 'p vfs_read $stack0:string', 'p vfs_read @11:b10@a/16',
  'p vfs_read arg123456789012345678901234567890=@11', 'p vfs_read =@11', 'p vfs_read var.1=@11',
  'p vfs_read var1=@11 var1=@12',
  'p vfs_read +1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))', 'p vfs_read arg1=',
  'p vfs_read%hoge', 'p vfs_read+10%return',
  'p vfs_read args=$arg*', 'p vfs_read +0($arg*)', 'p vfs_read $arg* $arg*', 'r vfs_read $arg*',
  'p vfs_read+20 $arg*', 'p vfs_read hoge', 'p kfree $arg10', 'r kfree $retval',
]) add(K, d);
add(K, 'p vfs_read+3', { setup: setupOf({ file: K, def: 'p vfs_read' }) });
add(K, 'r:kprobes/testevent do_exit', { setup: setupOf({ file: K, def: `p:kprobes/testevent ${FORK}` }) });
for (const d of [String.raw`bcd=\1`, String.raw`abcd=\1:u8`, String.raw`abcd=\"foo"`, String.raw`abcd=\1`])
  add(K, `p:kprobes/testevent ${FORK} ${d}`, { setup: setupOf({ file: K, def: String.raw`p:kprobes/testevent ${FORK} abcd=\1` }) });

// kprobe/kprobe_args_syntax.tc (good and bad arguments on vfs_read)
sec('kprobe-args-syntax');
for (const a of [
  '%ax', '%ex', '@_sdata', '@{{ADDR:_sdata}}', '@_sdata+10', '@_sdata-10',
  '@', '@deaqswdefr', '@_sdata*10', '@_sdata/10', '@_sdata%10', '@_sdata&10', '@_sdata|10',
  '$stack', '$stack0', '$stack1', '$stackp', '$stack0+10', '$stack1-10', '$comm',
  '+0(%ax)', '-0(%ax)', '+10($stack)', '+0($stack1)', '+10(@_sdata-10)', '+0(+10(+20($stack)))',
  '+(%ax)', '(%ax+10)', '-(%ax)', '(%ax)', '+10($comm)', '+0(%ax)+10',
  'varname=%ax', 'varname=varname2=%ax', '%ax:x16', '%ax::x16', '%ax:y16', 'x16:%ax',
  '$comm:string', '+0($stack):string', '$comm:x64', '$stack:string', '%ax:string',
]) add(K, `p vfs_read ${a}`);
add(K, 'r vfs_read $retval');

// every fetch type on a kprobe
sec('kprobe-types');
add(K, 'p:t1 vfs_read a=%di:s8 b=%di:s16 c=%di:s32 d=%di:s64 e=%di:u8 f=%di:u16 g=%di:u32 h=%di:u64');
add(K, 'p:t2 vfs_read i=%di:x8 j=%di:x16 k=%di:x32 l=%di:x64 c=%di:char y=%di:symbol ys=%di:symstr');
add(K, 'p:t3 vfs_read s=+0(%si):string u=+0(%si):ustring us=+u0(%si):string uu=+u8(%si):u32');
add(K, 'p:t4 vfs_read bf=+0(%di):b4@4/32 bf2=%di:b1@0/8 bf3=+8(%di):b3@61/64 arr=+0(%si):u8[4] sa=+0(%si):string[2]');
add(K, 'p:t5 vfs_read bad=%di:b4@30/32');
add(K, 'p:t6 vfs_read bad=%di:b0@0/32');
add(K, 'p:t7 vfs_read bad=%di:b4@4/31');
add(K, 'p:t8 vfs_read bad=%di:b4/32');
add(K, 'p:t9 vfs_read arr=%di:u8[2]');
add(K, 'p:t10 vfs_read arr=+0(%di):u8[64]');
add(K, 'p:t10b vfs_read a2=+0(%di):x16[0]');
add(K, 'p:t11 vfs_read arr=+0(%di):u8[65]');
add(K, 'p:t12 vfs_read arr=+0(%di):symbol[2] a=+0(%di):char[3]');
add(K, String.raw`p:t13 vfs_read im=\1234 imh=\0x10 imn=\-5 imp=\+7 is=\"hello" big=\0xffffffffffffffff`);
add(K, String.raw`p:t13b vfs_read is2=\"a b"`);
add(K, String.raw`p:t13c vfs_read big=\0x10000000000000000`);
add(K, String.raw`p:t14 vfs_read is=\"hi":u32`);
add(K, String.raw`p:t15 vfs_read im=\1:string`);
add(K, String.raw`p:t16 vfs_read im=\abc`);
add(K, 'p:t17 vfs_read cm=$comm cs=$comm:string cu=$COMM st=$stack st0=$stack0 st9=$stack9');
add(K, 'p:t18 vfs_read c=$comm:string[2]');
add(K, 'p:t19 vfs_read c=$comm:ustring');
add(K, 'p:t20 vfs_read a=+8(+0(%di)):u32 b=-8(%sp) c=+u0(%si):u8 d=-u8(%si):x8');
add(K, 'p:t21 vfs_read a=@jiffies b=@jiffies+8:u32 c=@linux_proc_banner:string d=@{{ADDR:jiffies}}:x32');
add(K, 'p:t22 vfs_read a=@jiffies:symstr b=@jiffies:symbol');
add(K, 'p:t22b vfs_read c=%di:symstr[2]');
add(K, 'p:t23 vfs_read a=$stack0:symstr b=+0(%di):symstr');
add(K, 'p:t24 vfs_read a=$comm:symstr');
add(K, 'p:t25 vfs_read a=%ip b=%sp c=%flags d=%r15 e=%orig_ax f=%cs g=%si:x16');
add(K, 'p:t26 vfs_read a=%rax b=%eax');
add(K, 'p:t27 vfs_read a=$arg1 b=$arg4 c=$arg5 d=$arg1:x32');
add(K, 'p:t28 vfs_read a=$arg0');
add(K, 'p:t29 vfs_read a=$arg1x');
add(K, 'p:t30 vfs_read $current');
add(K, 'p:t31 vfs_read a=+0(%di):%pd b=%si:%pD');
add(K, 'p:t32 dput name=$arg1:%pd');
add(K, 'p:t33 vfs_read $arg1:%pD');
add(K, 'p:t34 vfs_read a=%di:%pX');
add(K, 'p:t35 vfs_read a=$retval');
add(K, 'r:t36 vfs_read a=$retval b=$retval:s32 c=$arg1 d=$arg2:x32 e=$comm f=$stack0 g=+0($retval):u8');
add(K, 'r:t37 vfs_read a=$arg5');
add(K, 'r:t38 vfs_read $retval:string');
add(K, 'p:t39 vfs_read a=%di:b4@4/32:u8');
add(K, 'p:t40 vfs_read a=%di:');
add(K, 'p:t41 vfs_read a=%di:u8[]');
add(K, 'p:t42 vfs_read a=:u8');
add(K, 'p:t43 vfs_read a=+0x10(%di) b=+0x10u(%di)');
add(K, 'p:t44 vfs_read a=+0(-8(+16(%di)))');
add(K, 'p:t45 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di)))))))))))):u8');
add(K, 'p:t46 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))):u8');
add(K, 'p:t47 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di)))))))))))):string');
add(K, 'p:t48 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))):u8[2]');
add(K, 'p:t49 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))):string[2]');
add(K, 'p:t50 vfs_read a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di)))))))))))):b4@4/32');
add(K, 'p:t51 vfs_read a=@jiffies:string b=@jiffies:ustring');
add(K, 'p:t52 vfs_read a=\\"x');

// BTF arguments on kprobes
sec('kprobe-btf');
add(K, 'p vfs_read $arg*');
add(K, 'p:kb1 vfs_read file count');
add(K, 'p:kb2 vfs_read file->f_mode buf:string count:x32');
add(K, 'r:kb3 vfs_read $retval file');
add(K, 'r:kb4 vfs_read%return $retval');
add(K, 'r:kb5 kfree $arg1');
add(K, 'p:kb6 vfs_read+4 file');
add(K, 'p:kb7 vfs_read+9 $arg1');
add(K, 'p:kb8 kfree $arg2');
add(K, 'p:kb9 vfs_read $arg2 $arg*');
add(K, 'p:kb10 vfs_read $arg*:x32');
add(K, 'p:kb11 vfs_read $arg1:x32 $arg2:string');

// kretprobe maxactive and probe points
sec('kprobe-place');
for (const d of [
  'r vfs_read', 'r0 vfs_read', 'r1 vfs_read', 'r4096 vfs_read', 'r4097 vfs_read', 'r10:kr vfs_read',
  'r0x10:kr vfs_read', 'r10x:kr vfs_read', `r1${'0'.repeat(63)}:kr vfs_read`, 'r: vfs_read', 'r10 vfs_read',
  'r:kr vfs_read+0', 'r vfs_read+0', 'p vfs_read%return', 'p vfs_read+0%return', 'p:kp vfs_read%return $retval',
  'p vfs_read+4', 'p vfs_read+5', 'p vfs_read+8', 'p vfs_read+9', 'p vfs_read+4%return', 'r vfs_read+4',
  'p vfs_read+0x10', 'p vfs_read-4', 'p vfs_read+', 'p vfs_read+4294967296', 'p vfs_read+99999',
  'p {{ADDR:vfs_read}}', 'r {{ADDR:vfs_read}}', 'p:kaddr {{ADDR:vfs_read}} a=%di', 'p 0x0', 'p 12345',
  'p:kp {{ADDR:vfs_read}}%return',
  `p ${NONUNIQ}`, `p:nu {{ADDR:${NONUNIQ}}}`, `p ${BLACKLISTED}`, `p ${NOTRACE}`, 'p __schedule', 'p _sdata', 'p jiffies',
  'p linux_proc_banner', `p ${LONGFN}`, 'p nosuchmod:vfs_read', 'p vfs_read:1', 'p ext4:ext4_file_read_iter',
  'r nosuchmod:foo', 'p :vfs_read', 'p kfree', 'p do_sys_openat2', 'p vfs_read ', 'p vfs_read%return+4',
]) add(K, d);

// names, groups, limits
sec('names');
for (const d of [
  `p:${NAME63} vfs_read`, `p:${NAME64} vfs_read`, `p:${'g'.repeat(63)}/ev vfs_read`, `p:${'g'.repeat(64)}/ev vfs_read`,
  'p:g-roup/ev vfs_read', 'p:-grp/ev vfs_read', 'p:_x/_y vfs_read', 'p:1grp/ev vfs_read', 'p:grp/1ev vfs_read',
  'p:grp.ev vfs_read', 'p:a.b/c vfs_read', 'p:grp/ vfs_read', 'p:grp/e-v vfs_read', 'p:grp/ev/x vfs_read',
  'p:/ vfs_read', 'p:kprobes/ vfs_read', 'p:ftrace/kpev vfs_read', 'p:sched/sched_switch vfs_read',
  'r:ftrace/function vfs_read', 'p:Grp/Ev vfs_read', 'p:\xc3\xa9v vfs_read', 'p:\xe9v vfs_read', 'p:kp\xa0vfs_read',
  'p vfs_read common_pid=%ax', 'p vfs_read __probe_ip=%ax', 'p vfs_read __probe_func=%ax', 'p vfs_read common_tgid=%ax',
  `p vfs_read ${'a'.repeat(32)}=%ax`, `p vfs_read ${'a'.repeat(33)}=%ax`, `p vfs_read a=+0(${'1'.repeat(58)})`,
  `p vfs_read a=+0(${'1'.repeat(59)})`, 'p vfs_read %ax arg1=%bx', 'p vfs_read arg2=%bx %ax %cx',
  'p vfs_read file file', 'p vfs_read 1a=%ax', 'p vfs_read a-b=%ax', 'p vfs_read _=%ax',
  `f ${LONGFN}`, `f ${LONGFN}%return`, `p ${LONGFN}+4`, `r ${LONGFN}`,
]) add(d[0] === 'f' ? D : K, d);

// dynevent/dynevent_limitations.tc: 128 arguments accepted, 129 rejected
sec('limits');
for (const head of ['p vfs_read', 'f vfs_read', 't kfree', `p ${UPATH}:10`]) {
  add(D, `${head} ${imms(128)}`);
  add(D, `${head} ${imms(129)}`);
}
add(D, `e syscalls.sys_enter_openat ${imms(128)}`);
add(D, `e syscalls.sys_enter_openat ${imms(129)}`);
add(D, `p:big vfs_read ${Array.from({ length: 100 }, (_, i) => `a${i}=+0(%di):u8[64]`).join(' ')}`);

// ---------------------------------------------------------------- fprobe
sec('fprobe-syntax');
for (const d of [
  'f100 vfs_read', 'f1a111 vfs_read', 'f100000 vfs_read', 'f100 vfs_read%return', 'f10:foo vfs_read%return',
  'fx vfs_read', 'f: vfs_read', 'f0 vfs_read%return', 'f4097 vfs_read%return',
  'f non_exist_func', 'f vfs_read+10', 'f:/bar vfs_read', `f:${LONG65}/bar vfs_read`, 'f:foo.1/bar vfs_read',
  'f:foo/bar.1 vfs_read', `f:foo/${LONG65} vfs_read`, 't kmem/kfree',
  'f vfs_read $stack10000', 'f vfs_read $arg10000', 'f vfs_read $retval $arg1', 'f vfs_read $none_var',
  'f vfs_read %ax', 'f vfs_read @12345678abcde', 'f vfs_read @+10',
  String.raw`f vfs_read arg1=\x`, String.raw`f vfs_read arg1=\"abcd`,
  'f vfs_read +0@0)', 'f vfs_read +0ab1(@0)', 'f vfs_read +0(+0(@0)', 'f vfs_read +0($comm)', 'f vfs_read &1',
  'f vfs_read +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))',
  'f vfs_read +0(@11):u8[10', 'f vfs_read +0(@11):u8[10]a', 'f vfs_read +0(@11):u8[10a]', 'f vfs_read +0(@11):u8[256]',
  'f vfs_read @11:unknown_type', 'f vfs_read $stack0:string', 'f vfs_read @11:b10@a/16',
  'f vfs_read arg123456789012345678901234567890=@11', 'f vfs_read =@11', 'f vfs_read var.1=@11',
  'f vfs_read var1=@11 var1=@12',
  'f vfs_read +1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))', 'f vfs_read arg1=',
  'f vfs_read%hoge', 'f vfs_read%entry',
  'f vfs_read args=$arg*', 'f vfs_read +0($arg*)', 'f vfs_read $arg* $arg*', 'f vfs_read%return $arg*',
  'f vfs_read hoge', 'f kfree $arg10', 'f kfree%return $retval', 'f kfree $retval',
  'f vfs_read%return $retval->foo', 'f vfs_read file->foo', 'f vfs_read file-.foo', 'f vfs_read file:string',
  'f vfs_read $arg*', 't kfree $arg*', 'f vfs_read (file)file', 'f vfs_read file-', 'f vfs_read file->',
  'f vfs_read file.f_mode', 'f vfs_read pos->foo', 'f vfs_read count->foo',
]) add(D, d);
add(D, 'f:fprobes/testevent do_exit%return', { setup: setupOf(`f:fprobes/testevent ${FORK}`) });
for (const d of [String.raw`bcd=\1`, String.raw`abcd=\1:u8`, String.raw`abcd=\"foo"`, String.raw`abcd=\1`])
  add(D, `f:fprobes/testevent ${FORK} ${d}`, { setup: setupOf(String.raw`f:fprobes/testevent ${FORK} abcd=\1`) });

sec('fprobe-valid');
for (const d of [
  'f vfs_read', 'f vfs_read%return', 'f vfs_read $retval', 'f:fp vfs_read a=$arg1 b=$arg2:x32 c=$stack1 d=$comm',
  'f:fp vfs_read%return a=$retval:s64', 'f:fp vfs_read $arg1:x32 $arg2:u64 $stack1',
  'f:fp vfs_read%return $arg*', 'f:fp vfs_read $arg* $comm', 'f:fp vfs_read file count',
  'f:fp vfs_read%return $retval file count', 'f:fp vfs_read file->f_mode pos',
  'f:fp vfs_read%return $arg1 $retval', 'f:fp vfs_read file->f_path.dentry->d_name.name:string',
  'f:fp vfs_read file->f_path.dentry->d_name.name:ustring', 'f:fp vfs_read file->f_mode:x32',
  'f:fp vfs_read file->f_pos', 'f:fp vfs_read count:x16', 'f:fp vfs_read buf:string', 'f:fp vfs_read buf:ustring',
  'f:fp vfs_read file->f_path', 'f:fp vfs_read file->f_inode->i_ino', 'f:fp vfs_read file->f_path.dentry',
  'f:fp vfs_read file->f_path.dentry->d_name', 'f:fp vfs_read file->f_path.dentry->d_iname',
  'f:fp vfs_read file->f_path.dentry->d_iname:string', 'f:fp vfs_read pos:u32',
  'f:fp do_sys_openat2 filename:string', 'f:fp do_sys_openat2 how->flags how->mode', 'f:fp do_sys_openat2 dfd',
  'f:fp do_sys_openat2%return $retval dfd', 'f:fp consume_skb skb->pkt_type skb->cloned skb->len',
  'f:fp consume_skb skb->pkt_type:u8', 'f:fp getname_flags%return path=$retval->name:string',
  'f:fp getname_flags%return $retval->name', 'f:fp dentry_open%return $retval->f_mode',
  'f:fp dput name=$arg1:%pd', 'f:fp dput $arg1:%pd', 'f:fp vfs_read name=$arg1:%pD', 'f:fp vfs_read $arg1:%pD',
  'f:fp vfs_read file:%pD', 'f:fp vfs_read f=file:%pD', 'f:fp vfs_read file->f_path.dentry:%pd',
  'f:fp kfree', 'f:fp kfree $arg1', 'f:fp kfree x', 'f:fp schedule $arg1', 'f:fp schedule%return $retval',
  'f:fp vfs_read+0', `f:fp ${NOTRACE}`, `f:fp ${BLACKLISTED}`, `f:fp ${NONUNIQ}`, 'f:fp vfs_rea*',
  'f:fp nosuchmod:vfs_read', 'f:fp vmlinux:vfs_read', 'f:fp _sdata', 'f:fp {{ADDR:vfs_read}}',
  'f:fp vfs_read%return file->f_mode', 'f:fp vfs_read%return $retval:string', 'f:fp vfs_read $retval:x8',
  'f:fp vfs_read a=$retval', 'f:fp vfs_read a=$retvalx', 'f:fp vfs_read a=+0($retval)', 'f:fp vfs_read f=$stack',
  'f:fp vfs_read a=file b=$arg1', 'f:fp vfs_read $arg1 file', 'f:fp vfs_read a=$arg1 a=file',
  'f:fp vfs_read file->f_mode:string', 'f:fp vfs_read file->f_op->read', 'f:fp vfs_read file->f_op->read:symbol',
  'f:fp vfs_read +0(file):x32', 'f:fp vfs_read +8(file->f_path.dentry):x64',
  'f:fp vfs_read file->f_path.dentry->d_name.name:string[2]', 'f:fp vfs_read $arg1->f_mode',
  'f:fp vfs_read%return $arg1->f_mode', 'f:fp vfs_read file->f_mode:b4@0/32',
]) add(D, d);
add(D, 'f:fp vfs_read', { setup: setupOf('f:fp vfs_read') });
add(D, 'f:fp vfs_write', { setup: setupOf('f:fp vfs_read') });
add(D, 'f:fp vfs_read%return', { setup: setupOf('f:fp vfs_read') });
add(D, 't:fprobes/fp kfree', { setup: setupOf('f:fp vfs_read') });
add(D, 'f:fp vfs_write a=$arg1', { setup: setupOf('f:fp vfs_read a=$arg1') });
add(D, 'f:fp vfs_write a=$arg1:u32', { setup: setupOf('f:fp vfs_read a=$arg1') });
add(D, 'f:fp vfs_write file', { setup: setupOf('f:fp vfs_read file') });
add(D, 'f:fp vfs_read a=$arg2', { setup: setupOf('f:fp vfs_read a=$arg1') });
add(D, 'f:fp vfs_write%return $retval', { setup: setupOf('f:fp vfs_read%return $retval') });

// ---------------------------------------------------------------- tprobe
sec('tprobe-syntax');
for (const d of [
  't100 kfree', 't:/bar kfree', `t:${LONG65}/bar kfree`, 't:foo.1/bar kfree', 't: kfree',
  `t:foo/${LONG65} kfree`, 't:foo/bar.1 kfree', 't kfree $retval', 't kfree $stack10000', 't kfree $arg10000',
  't kfree $none_var', 't kfree %rax', 't kfree @12345678abcde', 't kfree @+10',
  String.raw`t kfree arg1=\x`, String.raw`t kfree arg1=\"abcd`,
  't kfree +0@0)', 't kfree +0ab1(@0)', 't kfree +0(+0(@0)', 't kfree +0($comm)', 't kfree &1',
  't kfree +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))',
  't kfree +0(@11):u8[10', 't kfree +0(@11):u8[10]a', 't kfree +0(@11):u8[10a]', 't kfree +0(@11):u8[256]',
  't kfree @11:unknown_type', 't kfree $stack0:string', 't kfree @11:b10@a/16',
  't kfree arg123456789012345678901234567890=@11', 't kfree =@11', 't kfree var.1=@11', 't kfree var1=@11 var1=@12',
  't kfree +1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))', 't kfree arg1=',
  't kfree%return', 't kfree a=$retvalx',
]) add(D, d);
add(D, 'f:tracepoint/testevent kfree', { setup: setupOf('t:tracepoint/testevent kfree') });
for (const d of [String.raw`bcd=\1`, String.raw`abcd=\1:u8`, String.raw`abcd=\"foo"`, String.raw`abcd=\1`])
  add(D, `t:tracepoints/testevent kfree ${d}`, { setup: setupOf(String.raw`t:tracepoints/testevent kfree abcd=\1`) });

sec('tprobe-valid');
for (const d of [
  't kfree', 't sched_switch', 't:tg/te sched_switch prev next', 't:tg/te sched_switch $arg*', 't:tg/te kfree ptr',
  't:tg/te kfree $arg1 $arg2 $arg3', 't:tg/te sched_switch prev->pid next->comm:string', 't:tg/te sched_switch preempt',
  't:tg/te kmem_cache_alloc obj_size=s->object_size', 't:tg/te sched_wakeup p->se.group_node.next->prev',
  't:tg/te sched_switch $comm $stack0', 't no_such_tracepoint', 't:tg/te no_such_tracepoint a=$arg1',
  't:tg/te sched_switch x', 't:tracepoints/x kfree', 't kfree:x', 't sched_update_nr_running_tp', 't 9pfoo',
  't:tg/te kfree $arg1:x32', 't:tg/te kfree a=$arg1:%pd', 't:tg/te sched_switch prev:u32',
]) add(D, d);
add(D, 't:tg/te kmem_cache_free', { setup: setupOf('t:tg/te kmem_cache_alloc') });
add(D, 't:tg/te kfree', { setup: setupOf('t:tg/te kfree') });

// ---------------------------------------------------------------- eprobe
sec('eprobe-syntax');
for (const d of [
  'e a.', 'e .b', 'e a.b', 'e syscalls/sys_enter_openat foo', 'e:/bar syscalls/sys_enter_openat',
  `e:${LONG65}/bar syscalls/sys_enter_openat`, 'e:foo.1/bar syscalls/sys_enter_openat', 'e: syscalls/sys_enter_openat',
  `e:foo/${LONG65} syscalls/sys_enter_openat`, 'e:foo/bar.1 syscalls/sys_enter_openat',
  'e:foo/bar syscalls/sys_enter_openat arg=dfd', 'e:foo/bar syscalls/sys_enter_openat arg=$foo',
  'e:foo/bar syscalls/sys_enter_openat if',
]) add(D, d);

sec('eprobe-valid');
for (const d of [
  'e syscalls.sys_enter_openat', 'e syscalls/sys_enter_openat', 'e:eg/ee syscalls/sys_enter_openat',
  'e:ee syscalls.sys_enter_openat', 'e:eg/ syscalls.sys_enter_openat',
  'e:eg/ee syscalls/sys_enter_openat filename=+0($filename):ustring flags=$flags:x32 cm=$comm',
  'e:eg/ee syscalls/sys_enter_openat file=+0($filename):ustring', 'e:eg/ee sched.sched_switch $prev_pid $next_comm',
  'e:eg/ee sched.sched_switch next=$next_comm:string pid=$next_pid:u16',
  'e:eg/ee sched.sched_switch prev=$prev_pid if prev_pid > 0',
  'e:eg/ee sched.sched_switch prev=$prev_pid if prev_pid >', 'e:eg/ee sched.sched_switch prev=$prev_pid if nofield == 1',
  'e:eg/ee sched.sched_switch foo=$nonfield', 'e:eg/ee sched.sched_switch $COMM $comm:string',
  'e:eg/ee sched.sched_switch a=$prev_pid:x8 b=$prev_state:s64 c=$prev_comm:char[4]',
  'e:eg/ee sched.sched_switch a=+0($prev_pid):u8', 'e:eg/ee sched.sched_switch a=%ax', 'e:eg/ee sched.sched_switch a=$stack0',
  'e:eg/ee sched.sched_switch a=$arg1', 'e:eg/ee sched.sched_switch a=$retval', 'e:eg/ee sched.sched_switch prev_pid',
  'e:eg/ee sched.sched_switch a=@jiffies', String.raw`e:eg/ee sched.sched_switch a=\1 b=\"x"`,
  'e:eg/ee kmem.kfree p=$ptr:x64 c=$call_site:symbol', 'e:eg/ee skb.kfree_skb len=(sk_buff)skbaddr->len',
  'e:eg/ee skb.kfree_skb (sk_buff)skbaddr->len', 'e:eg/ee skb.kfree_skb len=(no_such_struct)skbaddr->len',
  'e:eg/ee skb.kfree_skb len=(sk_buff)nofield->len', 'e:eg/ee skb.kfree_skb len=(sk_buff skbaddr->len',
  'e:eg/ee skb.kfree_skb len=(sk_buff)skbaddr->nomember', 'e:eg/ee kprobes.kp1', 'e:eg/ee ftrace.function',
  'e:eg/ee sched.sched_switch if', 'e:eg/ee sched.sched_switch if prev_pid == 1 && next_pid == 2',
  'e:eg/ee sched.no_such_event', 'e:eg/ee nosys.sched_switch',
]) add(D, d);
add(D, 'e:eg/ee syscalls/sys_enter_openat', { setup: setupOf('e:eg/ee syscalls/sys_enter_openat') });
add(D, 'e:kgroup/kevent syscalls/sys_enter_openat', { setup: setupOf('p:kgroup/kevent vfs_open file=+0($arg2)') });
add(D, 'p:eg/ee vfs_open', { setup: setupOf('e:eg/ee syscalls/sys_enter_openat') });
add(D, 'e:syscalls/sys_enter_open syscalls/sys_enter_openat file=+0($filename):ustring');
add(D, 'e:eg/ee2 eg.ee', { setup: setupOf('e:eg/ee syscalls/sys_enter_openat') });
add(D, 'e:eg/ee2 kprobes.kp1', { setup: setupOf('p:kp1 vfs_read') });
add(D, 'e:eg/ee2 fprobes.fp a=$__probe_ip', { setup: setupOf('f:fp vfs_read') });
add(D, 'e:eg/ee2 synthetic.syn a=$a', { setup: setupOf('s:syn u64 a') });
add(D, 'e:eg/ee sched.sched_switch a=$common_pid');

// ---------------------------------------------------------------- uprobe
sec('uprobe-syntax');
for (const d of [
  'p /non_exist_file:100', 'p /sys:100', `p ${UPATH}:10a`, `p ${UPATH}:10(1a)`, `p ${UPATH}:10(10`,
  `p ${UPATH}:10(10)a`, `p ${UPATH}:10 @+ab`, `p ${UPATH}:10 @symbol`, `p ${UPATH}:10%hoge`,
  `p ${UPATH}:10(10)%return`, `p ${UPATH}:10 $stack0:symstr`,
]) add(U, d);

sec('uprobe-valid');
for (const d of [
  `p ${UPATH}:${UOFF}`, `r ${UPATH}:${UOFF}`, `p:ug/ue ${UPATH}:${UOFF}%return`, `p ${UPATH}:${UOFF}(0x10)`,
  `p ${UPATH}:${UOFF}%return(0x10)`, `p:ue ${UPATH}:${UOFF} a=%ax:u32 b=@+0x10:u64 c=$stack0 d=+0(%sp):ustring`,
  `p:ue ${UPATH}:${UOFF} e=$comm f=\\"str" g=+u0(%di):u8 h=+0(%di):string i=%ip`,
  `r:ue ${UPATH}:${UOFF} rv=$retval`, `p:ue ${UPATH}:${UOFF} $retval`, `p:ue ${UPATH}:${UOFF} $arg1`,
  `p:ue ${UPATH}:${UOFF} file`, `p:ue ${UPATH}:${UOFF} a=$stack0:symbol`, `p:ue ${UPATH}:${UOFF} a=@0x1000`,
  `p:ue ${UPATH}:${UOFF} a=@+0x10:string`, `p:ue ${UPATH}:${UOFF} a=$stack1000000`, `p:ue ${UPATH}:${UOFF} $arg*`,
  `p:ue ${UPATH}:${UOFF} a=%ax:%pd`, `p ${UPATH}`, `p ${UPATH}:abc`, `p ${UPATH}:`, 'p /nonexist:0x10',
  'p /tmp:0x10', `p:ue /bin/dash:${UOFF}`, `p:ue ${UPATH}:0`, `p:ue ${UPATH}:18446744073709551615`,
  `p:ue ${UPATH}:18446744073709551616`, 'p /usr/lib/x86_64-linux-gnu/libc.so.6:0x1000',
  `r10 ${UPATH}:${UOFF}`, `p:ue ${UPATH}:${UOFF} a=$current`,
]) add(U, d);
add(D, `p:du ${UPATH}:${UOFF} a=%ax`);
add(D, `r ${UPATH}:${UOFF}`);
add(K, `p ${UPATH}:${UOFF}`);
add(U, 'p vfs_read');
add(U, `p:ug/ue ${UPATH}:${UOFF}`, { setup: setupOf({ file: U, def: `p:ug/ue ${UPATH}:${UOFF}` }) });
add(U, `p:ug/ue ${UPATH}:0x4770`, { setup: setupOf({ file: U, def: `p:ug/ue ${UPATH}:${UOFF}` }) });
add(U, `r:ug/ue ${UPATH}:0x4770`, { setup: setupOf({ file: U, def: `p:ug/ue ${UPATH}:${UOFF}` }) });
add(U, `p:ug/ue ${UPATH}:0x4770 a=%ax`, { setup: setupOf({ file: U, def: `p:ug/ue ${UPATH}:${UOFF}` }) });
add(U, `p:u2 ${UPATH}:${UOFF}(0x20)`, { setup: setupOf({ file: U, def: `p:u1 ${UPATH}:${UOFF}(0x10)` }) });
add(U, `p:u2 ${UPATH}:${UOFF}(0x10)`, { setup: setupOf({ file: U, def: `p:u1 ${UPATH}:${UOFF}(0x10)` }) });

// ---------------------------------------------------------------- synthetic
sec('synth-syntax');
for (const d of [
  'myevent chr arg', 'myevent unsigned arg', 'myevent char str]; int v', 'mye-vent char str[]', 'myevent char st-r[]',
  'myevent char str;[]', 'myevent char str; int', 'myevent char str[; int v', 'myevent char str[kdjdk]',
  'myevent char str[257]', 'mye;vent char str[]', 'myevent ; char str[]', 'myevent; char str[]',
  'myevent ;char str[]', '; char str[]', ';myevent char str[]', 'myevent',
]) add(S, d);
add(D, 's:junk/myevent char str[');

sec('synth-valid');
for (const d of [
  's:latency1 u64 lat; pid_t pid;', 's:synthetic/syn2 char comm[16]; char d[]; unsigned long x; long[] st',
  's:syn3 unsigned int a; bool b; gfp_t g; s8 c; s16 d; s32 e; s64 f; u8 h; u16 i; u32 j; int k; long l; unsigned char m; char n',
  's:syn4 char s[256]', 's:syn5 u64', 's:syn6 foo x', 's:syn7', 's:1syn u64 a', 's:syn8 u64 a u64 b',
  's:syn9 u64 a;;; u64 b', 's:syn10 unsigned long long x', 's:syn11 u64 common_pid', 's:syn12 u64 a; u64 a',
  `s:syn13 ${Array.from({ length: 64 }, (_, i) => `u64 f${i}`).join('; ')}`,
  `s:syn14 ${Array.from({ length: 65 }, (_, i) => `u64 f${i}`).join('; ')}`,
  's:syn15 char s[0x10]', 's:syn16 char s[1000]', 's:syn17 int x[4]', 's:syn18 u64 a;\tu64 b', 's: u64 a',
  's:syn19\tu64 a', 's:syn20 unsigned char c', 's:syn21 unsigned u64 x', 's:syn22 long[] st', 's:syn23 char s[ 8 ]',
]) add(D, d);
for (const d of ['syn4 u64 a', 'syn5 int x; int y', '  syn6 u64 a', 'syn7 u64 a; u64 b;', '!nosuch']) add(S, d);
add(S, '!syn4', { setup: setupOf({ file: S, def: 'syn4 u64 a' }) });
add(S, 'syn4 u64 a', { setup: setupOf({ file: S, def: 'syn4 u64 a' }) });
add(D, 's:syn4 u64 a', { setup: setupOf({ file: S, def: 'syn4 u64 a' }) });
add(S, 'syn4 u64 a', { setup: setupOf('p:syn4 vfs_read') });
add(D, 's:kp1 u64 a', { setup: setupOf('p:kp1 vfs_read') });

// ---------------------------------------------------------------- removal
sec('remove');
const kp = setupOf('p:kp vfs_read');
for (const d of ['-:kp', '-:kprobes/kp', '-:kprobes/', '-:nonexist', '-:', '-', '-:kp vfs_read', '-:kp vfs_write',
  '-:kp vfs_read+0', '!p:kp vfs_read', '!kp', '-:/kp', '-:other/kp', '- :kp', '-:kp ', '-:*'])
  add(D, d, { setup: kp });
add(K, '-:kp', { setup: kp });
add(K, '-:kprobes/kp', { setup: kp });
add(U, '-:kp', { setup: kp });
add(D, '-:kp vfs_read a=%ax', { setup: setupOf('p:kp vfs_read a=%ax') });
add(D, '-:kp vfs_read a=%bx', { setup: setupOf('p:kp vfs_read a=%ax') });
add(D, '-:kp vfs_read a=%ax b=%bx', { setup: setupOf('p:kp vfs_read a=%ax') });
add(D, '-:kp vfs_write', { setup: setupOf('p:kp vfs_read', 'p:kp vfs_write') });
add(D, '-:kp vfs_read', { setup: setupOf('p:kp vfs_read', 'p:kp vfs_write') });
add(D, '-:kp {{ADDR:vfs_read}}', { setup: setupOf('p:kp {{ADDR:vfs_read}}') });
add(D, '-:fp', { setup: setupOf('f:fp vfs_read') });
add(D, '-:fp vfs_read', { setup: setupOf('f:fp vfs_read%return') });
add(D, '-:fp vfs_read%return', { setup: setupOf('f:fp vfs_read%return') });
add(D, '-:fprobes/', { setup: setupOf('f:fp vfs_read', 'f:fp2 vfs_write', 'p:kp vfs_read') });
add(D, '-:eprobes/ee', { setup: setupOf('e:ee syscalls.sys_enter_openat') });
add(D, '-:ee syscalls.sys_enter_openat', { setup: setupOf('e:ee syscalls.sys_enter_openat') });
add(D, '-:ee syscalls/sys_enter_openat', { setup: setupOf('e:ee syscalls.sys_enter_openat') });
add(D, '-:ee sched.sched_switch', { setup: setupOf('e:ee syscalls.sys_enter_openat') });
add(D, '-:ee syscalls.sys_enter_openat a=$dfd', { setup: setupOf('e:ee syscalls.sys_enter_openat a=$dfd') });
add(D, '-:ee syscalls.sys_enter_openat a=$flags', { setup: setupOf('e:ee syscalls.sys_enter_openat a=$dfd') });
add(D, '-:eprobes/', { setup: setupOf('e:ee syscalls.sys_enter_openat', 'e:ee2 sched.sched_switch') });
add(D, '-:te', { setup: setupOf('t:te kfree') });
add(D, '-:ue', { setup: setupOf(`p:ue ${UPATH}:${UOFF}`) });
add(D, `-:ue ${UPATH}:${UOFF}`, { setup: setupOf(`p:ue ${UPATH}:${UOFF}`) });
add(D, `-:ue ${UPATH}:0x0000000000004760`, { setup: setupOf(`p:ue ${UPATH}:${UOFF}`) });
add(U, '-:ue', { setup: setupOf(`p:ue ${UPATH}:${UOFF}`) });
add(D, '-:synthetic/latency2', { setup: setupOf('s:latency1 u64 lat; pid_t pid;', 's:latency2 u64 lat; pid_t pid;') });
add(D, '-:latency1', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });
add(D, '-:latency1 u64 lat', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });
add(D, '-:synthetic/', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });
add(S, '!latency1', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });
add(S, '-:latency1', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });
add(S, '!latency1 u64 lat', { setup: setupOf('s:latency1 u64 lat; pid_t pid;') });

// ---------------------------------------------------------------- duplicates / multi-probe
sec('duplicates');
add(K, 'p:kp vfs_read', { setup: kp });
add(K, 'p:kp vfs_write', { setup: kp });
add(K, 'r:kp vfs_read', { setup: kp });
add(K, 'p:kp vfs_write a=%ax', { setup: kp });
add(K, 'p:kp vfs_write a=%bx:u32', { setup: setupOf('p:kp vfs_read a=%ax:u32') });
add(K, 'p:kp vfs_write b=%bx:u32', { setup: setupOf('p:kp vfs_read a=%ax:u32') });
add(K, 'p:kp vfs_write a=%bx:u64', { setup: setupOf('p:kp vfs_read a=%ax:u32') });
add(K, 'p:kp vfs_read a=%bx:u32', { setup: setupOf('p:kp vfs_read a=%ax:u32') });
add(K, 'p:kp vfs_read+4', { setup: kp });
add(K, 'p:kp2 vfs_read', { setup: kp });
add(K, 'p:other/kp vfs_read', { setup: kp });
add(D, 'f:kprobes/kp vfs_read', { setup: kp });
add(D, 'e:kprobes/kp syscalls.sys_enter_openat', { setup: kp });
add(D, 't:kprobes/kp kfree', { setup: kp });
add(D, `p:kprobes/kp ${UPATH}:${UOFF}`, { setup: kp });
add(D, 'p:fprobes/fp vfs_read', { setup: setupOf('f:fp vfs_read') });
add(D, 'r10:kr vfs_write', { setup: setupOf('r:kr vfs_read') });
add(D, 'r20:kr vfs_write', { setup: setupOf('r:kr vfs_read') });
add(D, 'p:kr vfs_write%return', { setup: setupOf('r:kr vfs_read') });
add(D, 'p:kp nosuchmod:foo', { setup: kp });
add(D, 'p:kp vfs_write a=%ax', { setup: setupOf('p:kp vfs_read a=%ax', 'p:kp vfs_open a=%ax') });
add(D, 'p:kp vfs_read a=%ax', { setup: setupOf('p:kp vfs_read a=%ax', 'p:kp vfs_open a=%ax') });

// ---------------------------------------------------------------- lines and dispatch
sec('lines');
for (const d of [
  '  p:kp vfs_read', 'p:kp\tvfs_read\ta=%ax', 'p:kp vfs_read # comment', '# only a comment', '', '   ',
  'x vfs_read', 'p', 'f', 'e', 't', 'r', 's', 's:', 'p vfs_read\x0ba=%ax', 'p:kp vfs_read a=%ax#b=%bx', 'u vfs_read',
  'p:kp vfs_read "a=%ax"', "p:kp vfs_read 'a b'", 'pp vfs_read', 'p;kp vfs_read', '!', '!p',
]) add(D, d);
for (const d of ['x vfs_read', 'f vfs_read', 't kfree', 'e syscalls.sys_enter_openat', 's:syn u64 a', '# c', '', 'p']) add(K, d);
// @symbols resolve when the probe registers: at definition for kprobes and eprobes (and 6.12 fprobes)
for (const d of ['p:kp vfs_read a=@nonexist_sym', 'p:kp {{ADDR:vfs_read}} a=@nonexist_sym', 'f:fp vfs_read a=@nonexist_sym',
  't:tp kfree a=@nonexist_sym', 'e:ep sched.sched_switch a=@nonexist_sym', 'p:kp nosuchmod:foo a=@nonexist_sym']) add(D, d);
// one write, several lines (trace_parse_run_command)
add(D, 'p:a vfs_read\np:b vfs_write');
add(D, 'p:a vfs_read\nx y\np:c vfs_read');
add(D, 'p:a vfs_read\n\n# c\n  \np:b vfs_write # c\n');
add(D, `p:long vfs_read ${'a=%ax '.repeat(800)}`);
add(D, `p:a vfs_read\np:long vfs_read ${'b=%bx '.repeat(800)}`);
for (const d of ['x vfs_read', 'f vfs_read', 'p', '']) add(U, d);
for (const d of ['s:syn u64 a', 'p vfs_read', '# c', '']) add(S, d);

// ---------------------------------------------------------------- 7.3: BTF typecasts, $current, this_cpu_*(), nesting
// (kprobe_syntax_errors.tc, fprobe_syntax_errors.tc, tprobe_syntax_errors.tc,
// eprobes_syntax_errors.tc, uprobe_syntax_errors.tc and btf_typecast_accepted.tc
// of 7.3, and their neighbours; older kernels refuse them)
sec('nesting');
const NEST9 = '+0(+0(+0(+0(+0(+0(+0(+0(+0(@0)))))))))';
const NEST8 = '+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))';
const LONG255 = `${'+1234567('.repeat(26)}@1234${')'.repeat(26)}`;
add(K, `p vfs_read ${NEST9}`);
add(K, `p:n8 vfs_read ${NEST8}`);
add(D, `f vfs_read ${NEST9}`);
add(D, `t kfree ${NEST9}`);
add(K, `p vfs_read ${LONG255}`);
add(K, `p:l255 vfs_read a=${'+0('.repeat(39)}@0${')'.repeat(39)}:u8`);
add(K, `p:l256 vfs_read a=${'+0('.repeat(39)}@00${')'.repeat(39)}:u8`);
add(K, `p:l63 vfs_read a=${'+0('.repeat(10)}@1234567890${')'.repeat(10)}:u8`);
add(K, 'p:big vfs_read a=$stack99999999999999999999');
add(K, 'p:big vfs_read a=$stack1x');
add(K, 'p:big vfs_read+4 a=$arg99999999999999999999');
add(D, 'e:big sched.sched_switch a=$99');
sec('typecast-syntax');
for (const pre of ['p vfs_read', 'f vfs_read']) {
  for (const a of [
    '(task_struct)file', '(a)((b)((c)((d)((e)((f)((g)((h)((i)file->i)->h)->g)->f)->e)->d)->c)->b)->a',
    '(task_struct,in_execve)file->comm', '(task_struct,foo_bar)file->pid', '(task_struct1234)file->pid',
    '(task_struct,se->group_node)file->comm', '(task_struct,->pid)file->comm', '(task_struct,.pid)file->comm',
    '(task_struct,.)file->comm', '(task_struct)@symbol+10->comm',
  ]) add(pre[0] === 'p' ? K : D, `${pre} arg1=${a}`);
}
for (const a of [
  '(file', '(file)', '(file)((file)', '(file)(file)', '(file)(file)-', '(file)+0(file', '(file)+0file->f_mode', '(file)+0(file)', '(file)+0(file)-x',
  '(file)this_cpu_ptr(file)', '(file)this_cpu_read(file)->f_mode', '(file)file-', '(file)file-x', '(file)$retval->f_mode', '(file)$comm->f_mode',
  '(file)hoge->f_mode', '(file)file->nosuch', '(file)file->f_path.nosuch', '(file)file->f_mode->x', '(file)%di->f_mode',
  '(file)@jiffies->f_mode', '(file)@jiffies-8->f_mode', '(file)\\1->f_mode', '(union)file->x', '(task_struct,pid)file->comm',
  '(file,f_path.dentry)file->f_mode', '(file)file->f_path:string', '(file)file->f_mode:string', '(file)file.f_mode',
]) add(K, `p vfs_read a=${a}`);
add(K, 'p vfs_read+4 a=(file)file->f_mode');
add(K, 'r vfs_read a=(file)file->f_mode');
add(D, 'f vfs_read%return a=(file)file->f_mode');
add(D, 't kfree a=(task_struct)objp->pid');
add(U, `p ${UPATH}:${UOFF} a=(file)%di->f_mode`);
sec('typecast-valid');
for (const [k, pre] of [['f', 'f:fpevent'], ['p', 'p:kpevent']]) {
  const file = k === 'p' ? K : D;
  add(file, `${pre}1 vfs_read name=(file)file->f_path.dentry->d_name.name:string`);
  add(file, `${pre}2 vfs_read name=(file)(file)->f_path.dentry->d_name.name:string`);
  add(file, `${pre}3 vfs_read name=(dentry)((file)file->f_path.dentry)->d_name.name:string`);
  add(file, `${pre}4 vfs_read name=(file,f_path)file->f_mode`);
  add(file, `${k === 'p' ? 'r:kpevent' : 'f:fpevent'}5 vfs_read${k === 'p' ? '' : '%return'} name=(file)$retval->f_path.dentry->d_name.name:string`);
  add(file, `${pre}6 vfs_read pid=$current->pid`);
  add(file, `${pre}7 vfs_read pid=(task_struct)$current->pid`);
  add(file, `${pre}8 vfs_read pid=(task_struct,group_leader)$current->pid`);
}
add(K, 'p:tc1 vfs_read a=(file)file->f_inode->i_ino b=(file)+0($arg1)->f_mode c=(path)(+64($arg1))->dentry d=(file)file->f_path.dentry');
add(K, 'p:tc2 vfs_read a=(task_struct)(@init_task)->pid b=(file,f_mode)file->f_flags c=(file)file->f_mode:x8');
add(K, 'p:tc3 vfs_read a=(dentry)(+0(+72($arg1)))->d_name.name:string b=(qstr)(+40(+72($arg1)))->len');
add(D, 't:tc4 kfree a=(page)objp->flags');
add(D, 'e:ec1 kmem.kfree p=(task_struct)ptr->pid');
add(D, 'e:ec2 kmem.kfree p=(task_struct)$ptr->pid');
add(D, 'e:ec3 kmem.kfree p=(task_struct)ptr');
add(D, 'e:ec4 sched.sched_switch p=(task_struct)prev_pid->pid');
sec('current');
for (const a of ['$current', '$current:x64', '$current->comm:string', '$current->pid', '$currentx', '$current-pid', '$current.pid',
  '+0($current)', '$current->nosuch', '$current->mm->pgd', '$current:string', '$current->se.vruntime', '$current->thread_info.flags']) add(K, `p:cur vfs_read a=${a}`);
add(K, 'r:cur vfs_read a=$current->pid');
add(K, 'p:cur vfs_read+4 a=$current->pid');
add(D, 'f:cur vfs_read a=$current->pid b=$comm');
add(D, 't:cur kfree a=$current->pid');
add(D, 'e:cur sched.sched_switch a=$current');
add(D, 'e:cur sched.sched_switch a=current');
add(D, `p:cur ${UPATH}:${UOFF} a=$current:u8`);
add(D, 'f:foo/bar10 vfs_read arg1=$comm arg2=$current');
sec('percpu');
for (const a of ['this_cpu_read(@runqueues)', 'this_cpu_ptr(@runqueues)', 'this_cpu_ptr(@runqueues):x64', 'this_cpu_read(@runqueues+8):u32',
  'this_cpu_read(%di)', 'this_cpu_ptr(+0(%di))', 'this_cpu_read(@runqueues', 'this_cpu_ptr($comm)', 'this_cpu_ptr(%di):string',
  'this_cpu_read(this_cpu_ptr(@runqueues))', 'this_cpu_ptr()', 'this_cpu_read(file->f_mode)', 'this_cpu_ptrx(%di)', '+0(this_cpu_ptr(@runqueues))',
  'this_cpu_read(\\1)', 'this_cpu_ptr(@cpu_number):s32']) add(K, `p:pc vfs_read a=${a}`);
add(D, 'f:pc vfs_read a=this_cpu_read(@runqueues)');
add(D, 'e:pc syscalls.sys_enter_openat arg=this_cpu_read(file)');
add(D, `p:pc ${UPATH}:${UOFF} a=this_cpu_read(%di)`);
sec('eprobe-fields');
for (const a of ['arg=COMM', 'arg=current', 'arg=dfd', 'arg=filename:ustring', 'arg=+0(filename):ustring', 'arg=dfd->x', 'arg=_x', 'arg=$dfd', 'arg=$COMM', 'arg=comm'])
  add(D, `e:foo/bar syscalls.sys_enter_openat ${a}`);
add(D, 'e syscalls/sys_enter_openat foo');
add(D, 'e:ep sched.sched_switch a=prev_comm b=next_pid c=$prev_state');

// ---------------------------------------------------------------- %pd / %pD rewritten before parsing
// The error_log entry of a rejected definition shows the rewritten arguments,
// and the caret points into them.
sec('pd-errlog');
for (const d of [
  'f:ev1 dput+4 $stack3:%pD file->f_path.dentry arg_1=%dx x=count:u8',
  't:my_probe kmem_cache_alloc child->comm:string:%pd prev->comm',
  'p:g/e _raw_spin_lock @jiffies:%pd $retval:x8[4] x=$arg4:x32',
  'p:kp vfs_read a=%di:%pd b=%zz', 'p:kp vfs_read b=%zz a=%di:%pd', 'p:kp vfs_read a=%zz:%pd',
  'p:kp vfs_read a=%di:%pD b=$arg9', 'p:kp vfs_read $arg1:%pD b=%zz', 'p:kp vfs_read $arg* a=%di:%pd c=%zz',
  'p:kp vfs_read a=%di:%pd $retval', 'p:kp vfs_read a=%di:%pd:u8', 'p:kp vfs_read a=%di:%pd a=%si',
  'p:kp vfs_read %di:%pd %zz', 'p:kp vfs_read a=%di:%pd b=%si:%pD c=%zz', 'p:kp vfs_read+9 a=%di:%pd b=%zz',
  'p:kp vfs_read a=+0(%di):%pd b=+0(%di):%pd c=+0(%di):%pd d=+0(%di):%pd e=+0(%di):%pd f=+0(%di):%pd g=%zz',
  `p:kp vfs_read ${Array.from({ length: 8 }, (_, i) => `a${i}=+0(+0(%di)):%pD`).join(' ')} z=%zz`,
  'r:kr vfs_read a=%ax:%pd $arg9', 'r:kr vfs_read $retval:%pd b=%zz', 'r:kr vfs_read a=$retval:%pD $stack99999',
  'f:fp vfs_read file:%pD count->x', 'f:fp vfs_read%return $retval:%pd file->nosuch', 'f:fp vfs_read $arg2:%pd $arg9',
  'f:fp vfs_read a=file:%pD b=%ax', 'f:fp dput+4 $arg1:%pd', 'f:fp dput $arg1:%pd x=$arg1:%pD y=dentry->nosuch',
  't:tp kfree ptr:%pd nosuch', 't:tp sched_switch prev:%pD prev->nosuch', 't:tp kfree a=$arg1:%pd $retval',
  'e:ep sched.sched_switch a=$prev_pid:%pd b=$nosuch', 'e:ep sched.sched_switch b=$nosuch a=$prev_pid:%pd',
  `p:ue ${UPATH}:${UOFF} a=%ax:%pd b=%zz`, `p:ue ${UPATH}:${UOFF} b=%zz a=%ax:%pD`,
]) add(D, d);
add(K, 'p:kp vfs_read a=%di:%pd b=%zz');
add(K, 'r:kr vfs_read a=%ax:%pD $arg1 b=%zz');

// ---------------------------------------------------------------- return probes at the entry (+4 after endbr64)
sec('retprobe-entry');
for (const d of [
  'r:ev1 trace_event_raw_event_sched_switch+4', 'r:ev1 trace_event_raw_event_sched_switch+4 x=%zz',
  'r:ev1 trace_event_raw_event_sched_switch+4 $retval', 'r:ev1 trace_event_raw_event_sched_switch+0 x=%zz',
  'r:ev1 trace_event_raw_event_sched_switch+2 x=%zz', 'r:ev1 trace_event_raw_event_sched_switch+5 x=%zz',
  'p:ev1 trace_event_raw_event_sched_switch+4 $arg1', 'p:ev1 trace_event_raw_event_sched_switch $arg1',
  'r do_sys_openat2+4', 'r do_sys_openat2+5', 'r mutex_lock+4', 'r _raw_spin_lock+4 x=%zz', 'r native_sched_clock+4 x=%zz',
  'r seq_read_iter+4 $retval', 'r:kr ksys_read+4 x=%zz', 'r:kr vfs_read+9', 'p:kp mutex_lock+4 $arg1',
]) add(K, d);

// ---------------------------------------------------------------- instruction boundaries and text the kernel will not patch
sec('insn-boundary');
for (const d of [
  'p seq_read_iter+16 @jiffies:u8', 'p seq_read_iter+15', 'p seq_read_iter+17', 'p seq_read_iter+20', 'p seq_read_iter+25',
  'p:g/e mutex_lock+16', 'p:g/e mutex_lock+13', 'p:g/e mutex_lock+14', 'p:g/e mutex_lock+18', 'p:g/e mutex_lock+10',
  'p:g/e mutex_lock+9', 'p:g/e mutex_lock+12', 'p:g/e mutex_lock+28', 'r:g/e mutex_lock+16',
  'p _raw_spin_lock+9', 'p _raw_spin_lock+10', 'p _raw_spin_lock+12', 'p _raw_spin_lock+16', 'p ksys_read+16', 'p ksys_read+23',
]) add(K, d);

export default rows;
