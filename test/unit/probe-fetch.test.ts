/**
 * The fetch executor on hand-built registers and memory: what each fetch
 * argument records and how the trace prints it (registers, stack, $argN,
 * $retval, $comm, memory and user memory, @symbols, immediates, strings,
 * symbols, bitfields, arrays, %pd/%pD, BTF paths, entry data, faults; 7.3's
 * typecasts, $current and this_cpu_*()).
 */
import { describe, expect, it } from 'vitest';
import { memberPath } from '../../src/kernel/ctype_member.js';
import { AddressSpace } from '../../src/kernel/memory.js';
import { PtRegs } from '../../src/kernel/regs.js';
import { buildProbeRecord, storeEntryData, type FetchSource, type ProbeMemory } from '../../src/trace/probe/fetch_exec.js';
import { DynEventRegistry } from '../../src/trace/dynevent/trace_dynevent.js';
import { TraceEprobe } from '../../src/trace/dynevent/trace_eprobe.js';
import { printProbeArgs } from '../../src/trace/probe/probe_print.js';
import { ProbeDynEvent } from '../../src/trace/probe/trace_probe.js';
import { testProbeEnv } from '../helpers/probe-env.js';

const { env } = testProbeEnv('7.2');
const KSTACK = 0xffffc90000014000n;
const KOBJ = 0xffff888100000000n;
const USTR = 0x7ffd00001000n;

function world() {
  const kmem = new AddressSpace();
  const umem = new AddressSpace();
  const regs = new PtRegs();
  regs.sp = KSTACK - 0x100n;
  const mem: ProbeMemory = {
    readKernel: (a, n) => kmem.read(a, n),
    readUser: (a, n) => umem.read(a, n),
    sprintSymbol: (a) => {
      const hit = a ? env.kallsyms.lookupAddr(a) : undefined;
      return hit ? `${hit.name}+0x${(a - hit.addr).toString(16)}/0x${hit.size.toString(16)}` : `0x${a.toString(16)}`;
    },
    current: 0n,
    thisCpuPtr: (p) => p,
  };
  return { kmem, umem, regs, mem };
}

function probe(def: string): ProbeDynEvent {
  const reg = new DynEventRegistry(env);
  const r = reg.write('dynamic_events', def + '\n');
  expect(r.errno, JSON.stringify(r.log)).toBe(0);
  const p = reg.list[0];
  if (!(p instanceof ProbeDynEvent)) throw new Error(`not a probe: ${def}`);
  return p;
}

/** The args text of one hit, as the trace prints it after the head. */
function hit(p: ProbeDynEvent, src: FetchSource): string {
  const head = p.event.argsOffset();
  const rec = buildProbeRecord(p.tp, head, src, () => {});
  return printProbeArgs(p.tp.args, rec, head, src.mem.sprintSymbol);
}

describe('fetch executor', () => {
  it('registers, stack slots, the stack pointer and $argN', () => {
    const w = world();
    w.regs.set('di', 0x1111n);
    w.regs.set('si', 0x2222n);
    w.regs.set('r9', 0x6666n);
    w.regs.set('ax', 42n);
    w.kmem.writeU64(w.regs.sp, 0xffffffff81000123n);
    w.kmem.writeU64(w.regs.sp + 8n, 7n);
    w.kmem.writeU64(w.regs.sp + 16n, 8n);
    const tp = probe('p:t vfs_read a=%di b=%si:u16 s0=$stack0 s1=$stack1:s32 sp=$stack a1=$arg1 a6=$arg6 a7=$arg7 a8=$arg8 ax=%ax:s8');
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(
      ` a=0x1111 b=8738 s0=0xffffffff81000123 s1=7 sp=0x${w.regs.sp.toString(16)} a1=0x1111 a6=0x6666 a7=0x7 a8=0x8 ax=42`,
    );
  });

  it('a stack slot past the kernel stack reads as 0', () => {
    const w = world();
    w.regs.sp = KSTACK - 8n;
    w.kmem.writeU64(KSTACK - 8n, 5n);
    w.kmem.writeU64(KSTACK, 9n);
    const tp = probe('p:t vfs_read a=$stack0 b=$stack1');
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(' a=0x5 b=0x0');
  });

  it('dereferences, strings, user strings, faults', () => {
    const w = world();
    w.kmem.writeCString(KOBJ + 0x40n, 'hello');
    w.kmem.writeU64(KOBJ + 8n, KOBJ + 0x40n);
    w.umem.writeCString(USTR, '/dev/null');
    w.regs.set('di', KOBJ);
    w.regs.set('si', USTR);
    const tp = probe(
      'p:t vfs_read p=+8(%di) s=+0(+8(%di)):string u=+0(%si):ustring u2=+u0(%si):string k=+0(%si):string f=+0(%ax):string n=+16(%ax):u32 c=+0(+8(%di)):char',
    );
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(
      ` p=0x${(KOBJ + 0x40n).toString(16)} s="hello" u="/dev/null" u2="/dev/null" k=(fault) f=(fault) n=0 c='h'`,
    );
  });

  it('$comm, immediates and immediate strings', () => {
    const w = world();
    const tp = probe('p:t vfs_read c=$comm i=\\42 n=\\-1:s32 s=\\"abc"');
    expect(hit(tp, { regs: w.regs, comm: 'head', mem: w.mem })).toBe(' c="head" i=0x2a n=-1 s="abc"');
  });

  it('@symbols (resolved at registration) and symbol / symstr types', () => {
    const w = world();
    const banner = env.kallsyms.lookupName('linux_proc_banner')!;
    const vfsRead = env.kallsyms.lookupName('vfs_read')!;
    w.kmem.writeCString(banner.addr, '%s version %s');
    w.kmem.writeU64(w.regs.sp, vfsRead.addr + 4n);
    const tp = probe('p:t vfs_read b=@linux_proc_banner:string x=@linux_proc_banner:x8 s=$stack0:symbol ss=$stack0:symstr');
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(
      ` b="%s version %s" x=0x25 s=vfs_read+0x4/0x${vfsRead.size.toString(16)} ss="vfs_read+0x4/0x${vfsRead.size.toString(16)}"`,
    );
  });

  it('bitfields and arrays (scalars and strings)', () => {
    const w = world();
    w.kmem.write(KOBJ, Buffer.from([0x12, 0x34, 0x56, 0x78]));
    w.kmem.writeCString(KOBJ + 0x100n, 'one');
    w.kmem.writeCString(KOBJ + 0x108n, 'two');
    w.kmem.writeU64(KOBJ + 0x200n, KOBJ + 0x100n);
    w.kmem.writeU64(KOBJ + 0x208n, KOBJ + 0x108n);
    w.regs.set('di', KOBJ);
    w.regs.set('si', KOBJ + 0x200n);
    const tp = probe('p:t vfs_read bf=+0(%di):b4@4/8 a=+0(%di):x8[4] w=+0(%di):u16[2] ss=+0(%si):string[2]');
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(' bf=1 a={0x12,0x34,0x56,0x78} w={13330,30806} ss={"one","two"}');
  });

  it('%pd and %pD name a dentry and a file', () => {
    const w = world();
    // struct file -> f_path.dentry -> d_name.name, at the BTF offsets of 7.2
    const file = KOBJ;
    const dentry = KOBJ + 0x1000n;
    const name = KOBJ + 0x2000n;
    w.kmem.writeU64(file + 0x48n, dentry);
    w.kmem.writeU64(dentry + 0x28n, name);
    w.kmem.writeCString(name, 'enable');
    w.regs.set('di', file);
    w.regs.set('si', dentry);
    const tp = probe('p:t vfs_read f=$arg1:%pD d=%si:%pd');
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(' f="enable" d="enable"');
  });

  it('BTF parameters and field paths (file->f_mode) on an fprobe', () => {
    const w = world();
    const tp = probe('f:t vfs_read file count mode=file->f_mode pos');
    const fmodeOff = BigInt((tp.tp.args[2].code.find((c) => c.op === 'DEREF' || c.op === 'ST_MEM')?.offset ?? 0));
    w.kmem.write(KOBJ + fmodeOff, Buffer.from([0x0d, 0x80, 0x0a, 0x04]));
    w.regs.set('di', KOBJ);
    w.regs.set('dx', 1024n);
    w.regs.set('cx', 0xffffc90000013e00n);
    expect(hit(tp, { regs: w.regs, comm: 'head', mem: w.mem })).toBe(` file=0x${KOBJ.toString(16)} count=1024 mode=67797005 pos=0xffffc90000013e00`);
  });

  it('return probes: $retval, and entry arguments from the entry data', () => {
    const w = world();
    const tp = probe('f:t vfs_read%return file=$arg1 r=$retval c=count');
    w.regs.set('di', KOBJ);
    w.regs.set('dx', 1024n);
    const edata = storeEntryData(tp.tp.entryArgs, w.regs, w.mem);
    const exit = new PtRegs();
    exit.ax = 220n;
    expect(hit(tp, { regs: exit, edata, comm: 'head', mem: w.mem })).toBe(` file=0x${KOBJ.toString(16)} r=220 c=1024`);
  });

  it('eprobes read the attached record: numbers, static and dynamic strings', () => {
    const w = world();
    const tp = probe('e:ep sched/sched_switch prev=$prev_pid comm=$prev_comm:string c2=$prev_comm n=$next_comm:string cm=$comm:string');
    const rec = Buffer.alloc(64);
    const f = (n: string) => tp instanceof TraceEprobe ? tp.loc.attached.fields.find((x) => x.name === n)! : undefined!;
    rec.write('sh\0', f('prev_comm').offset, 'latin1');
    rec.writeInt32LE(114, f('prev_pid').offset);
    rec.write('swapper/1\0', f('next_comm').offset, 'latin1');
    const out = hit(tp, { record: rec, comm: 'sh', mem: w.mem });
    expect(out).toMatch(/^ prev=0x72 comm="sh" c2=0x[0-9a-f]+ n="swapper\/1" cm="sh"$/);
  });
});

describe('fetch executor: 7.3 typecasts, $current and this_cpu_*()', () => {
  const env73 = testProbeEnv('7.3').env;
  const probe73 = (def: string): ProbeDynEvent => {
    const reg = new DynEventRegistry(env73);
    const r = reg.write('dynamic_events', def + '\n');
    expect(r.errno, JSON.stringify(r.log)).toBe(0);
    return reg.list[0] as ProbeDynEvent;
  };
  /** A member's byte offset in a struct, as 7.3's BTF lays it out. */
  const off = (struct: string, path: string): bigint => BigInt(memberPath(env73.btf!.struct(struct)!, path.split('.'))!.bitOffset / 8);

  it('(struct)ptr->member, nested casts and the container_of field option', () => {
    const w = world();
    const file = KOBJ;
    const dentry = KOBJ + 0x1000n;
    w.kmem.write(file + off('file', 'f_mode'), Buffer.from([0x1d, 0, 0, 0]));
    w.kmem.writeU64(file + off('file', 'f_path.dentry'), dentry);
    w.kmem.writeU64(dentry + off('dentry', 'd_name.name'), KOBJ + 0x2000n);
    w.kmem.writeCString(KOBJ + 0x2000n, 'myfile');
    w.regs.set('di', file);
    // %si points at the f_path member of the same struct file
    w.regs.set('si', file + off('file', 'f_path'));
    const tp = probe73(
      'p:t vfs_read m=(file)%di->f_mode n=(file)%di->f_path.dentry->d_name.name:string d=(dentry)((file)%di->f_path.dentry)->d_name.name:string c=(file,f_path)%si->f_mode',
    );
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem: w.mem })).toBe(' m=29 n="myfile" d="myfile" c=29');
  });

  it('$current is the task_struct; its members through BTF', () => {
    const w = world();
    const task = KOBJ + 0x4000n;
    w.kmem.write(task + off('task_struct', 'pid'), Buffer.from([0x39, 0x05, 0, 0]));
    w.kmem.writeCString(task + off('task_struct', 'comm'), 'head');
    const tp = probe73('p:t vfs_read cur=$current pid=$current->pid comm=$current->comm:string');
    expect(hit(tp, { regs: w.regs, comm: 'head', mem: { ...w.mem, current: task } })).toBe(` cur=0x${task.toString(16)} pid=1337 comm="head"`);
  });

  it('this_cpu_ptr() moves a per-CPU pointer to the running CPU; this_cpu_read() loads from there', () => {
    const w = world();
    const rq = env73.kallsyms.lookupName('runqueues')!.addr;
    const cpuOffset = 0x40000n;
    w.kmem.writeU64(rq + cpuOffset, 0x1234n);
    w.kmem.writeU64(KOBJ + cpuOffset, 0x5678n);
    w.regs.set('di', KOBJ);
    const tp = probe73('p:t vfs_read p=this_cpu_ptr(@runqueues) r=this_cpu_read(@runqueues) d=this_cpu_read(%di)');
    const mem = { ...w.mem, thisCpuPtr: (ptr: bigint) => ptr + cpuOffset };
    expect(hit(tp, { regs: w.regs, comm: 'cat', mem })).toBe(` p=0x${(rq + cpuOffset).toString(16)} r=0x1234 d=0x5678`);
  });
});
