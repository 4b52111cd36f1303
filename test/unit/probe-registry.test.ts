/**
 * Pieces of the probe parsers the differential table does not isolate: the
 * kernel string primitives, write() line handling, busy events, clearing,
 * per-file listings, fetch programs.
 */
import { describe, expect, it } from 'vitest';
import { testEmulator } from '../helpers/emulator.js';
import { DynEventRegistry, runCommands, type DynEvent } from '../../src/trace/dynevent/trace_dynevent.js';
import { ProbeDynEvent, type TraceProbe } from '../../src/trace/probe/trace_probe.js';
import { globMatch } from '../../src/kernel/glob_match.js';
import { argvSplit, isGoodName, kstrtol, kstrtoul, kstrtouint, sanitizeEventName, simpleStrtoul } from '../../src/trace/probe/kstr.js';
import { testProbeEnv } from '../helpers/probe-env.js';

describe('kernel string primitives', () => {
  it('kstrtoul: base 0, one trailing newline, ERANGE on overflow', () => {
    expect(kstrtoul('0x10')).toEqual({ ok: true, value: 16n });
    expect(kstrtoul('010')).toEqual({ ok: true, value: 8n });
    expect(kstrtoul('+7\n')).toEqual({ ok: true, value: 7n });
    expect(kstrtoul('0x')).toEqual({ ok: false, err: 'EINVAL' });
    expect(kstrtoul('')).toEqual({ ok: false, err: 'EINVAL' });
    expect(kstrtoul('18446744073709551616')).toEqual({ ok: false, err: 'ERANGE' });
    expect(kstrtoul('1a', 10)).toEqual({ ok: false, err: 'EINVAL' });
    expect(kstrtol('-5')).toEqual({ ok: true, value: -5n });
    expect(kstrtol('9223372036854775808')).toEqual({ ok: false, err: 'ERANGE' });
    expect(kstrtouint('4294967296')).toEqual({ ok: false, err: 'ERANGE' });
    expect(simpleStrtoul('12@4')).toEqual({ value: 12n, end: 2 });
  });

  it('argv_split: kernel whitespace (NBSP included), no quoting', () => {
    expect(argvSplit("  p:kp\tvfs_read\xa0'a b'")).toEqual(['p:kp', 'vfs_read', "'a", "b'"]);
  });

  it('glob_match and names', () => {
    expect(globMatch('vfs_rea*', 'vfs_read')).toBe(true);
    expect(globMatch('*:%p[dD]', 'x:%pD')).toBe(true);
    expect(globMatch('*:%p[dD]', 'x:%px')).toBe(false);
    expect(globMatch('v?s_read', 'vfs_read')).toBe(true);
    expect(isGoodName('\xe9v')).toBe(true);
    expect(isGoodName('\xc3\xa9v')).toBe(false);
    expect(sanitizeEventName('p_mod:sym.c_0')).toBe('p_mod_sym_c_0');
    expect(sanitizeEventName('*a*')).toBe('*a_');
  });
});

describe('a write to a control file (trace_parse_run_command)', () => {
  it('splits lines and cuts comments', () => {
    expect([...runCommands('p:a vfs_read # x\n\n# only\np:b vfs_write')]).toEqual(['p:a vfs_read ', '', '', 'p:b vfs_write']);
  });

  it('refuses a line longer than the 4 KiB buffer', () => {
    expect([...runCommands('p ' + 'a'.repeat(5000))]).toEqual([{ errno: 'EINVAL' }]);
    expect([...runCommands('p:a x\n' + 'b'.repeat(5000))]).toEqual(['p:a x', { errno: 'EINVAL' }]);
  });

  it('applies the lines before a failing one', () => {
    const reg = new DynEventRegistry(testProbeEnv('7.2').env);
    const r = reg.write('dynamic_events', 'p:a vfs_read\nx y\np:c vfs_read\n');
    expect(r.errno).toBe('EINVAL');
    expect(reg.listing('dynamic_events')).toBe('p:kprobes/a vfs_read\n');
  });
});

/** The parsed probe of a probe's dynamic event. */
function tpOf(ev: DynEvent): TraceProbe {
  if (!(ev instanceof ProbeDynEvent)) throw new Error(`not a probe: ${ev.show()}`);
  return ev.tp;
}

describe('the dynamic-event registry', () => {
  const { env } = testProbeEnv('7.2');

  it('lists each type in its own file, dynamic_events lists all in definition order', () => {
    const reg = new DynEventRegistry(env);
    for (const d of ['s:lat u64 x; pid_t pid', 'p:kp vfs_read', 'p:up /bin/sh:0x10', 'f:fp vfs_read', 'r:kp2 vfs_write']) {
      expect(reg.write('dynamic_events', d).errno, d).toBe(0);
    }
    expect(reg.listing('dynamic_events')).toBe(
      's:synthetic/lat\tu64 x; pid_t pid\np:kprobes/kp vfs_read\np:uprobes/up /bin/sh:0x0000000000000010\nf:fprobes/fp vfs_read\nr10:kprobes/kp2 vfs_write\n',
    );
    expect(reg.listing('kprobe_events')).toBe('p:kprobes/kp vfs_read\nr10:kprobes/kp2 vfs_write\n');
    expect(reg.listing('uprobe_events')).toBe('p:uprobes/up /bin/sh:0x0000000000000010\n');
    expect(reg.listing('synthetic_events')).toBe('lat\tu64 x; pid_t pid\n');
  });

  it('keeps enabled events: removal is EBUSY, clearing is EBUSY and removes nothing', () => {
    const reg = new DynEventRegistry(env);
    reg.write('dynamic_events', 'p:kp vfs_read\nf:fp vfs_read');
    reg.event('kprobes', 'kp')!.enabled = true;
    expect(reg.write('dynamic_events', '-:kp').errno).toBe('EBUSY');
    expect(reg.truncate('dynamic_events')).toBe('EBUSY');
    expect(reg.list.length).toBe(2);
    // only the fprobes: clearing kprobe_events is still refused, uprobe_events has nothing busy
    expect(reg.truncate('kprobe_events')).toBe('EBUSY');
    expect(reg.truncate('uprobe_events')).toBe(0);
    reg.event('kprobes', 'kp')!.enabled = false;
    expect(reg.truncate('kprobe_events')).toBe(0);
    expect(reg.listing('dynamic_events')).toBe('f:fprobes/fp vfs_read\n');
  });

  it('an appended probe can go while its event is enabled; the last one cannot', () => {
    const reg = new DynEventRegistry(env);
    reg.write('dynamic_events', 'p:kp vfs_read\np:kp vfs_write');
    reg.event('kprobes', 'kp')!.enabled = true;
    expect(reg.write('dynamic_events', '-:kp vfs_write').errno).toBe(0);
    expect(reg.write('dynamic_events', '-:kp vfs_read').errno).toBe('EBUSY');
  });

  it('live, an event is its own event type in the events layer while it has probes', () => {
    const { tracing } = testEmulator({ series: '7.2' });
    const dyn = tracing.dynEvents;
    const type = () => tracing.events.find('kprobes', 'kp');
    dyn.write('dynamic_events', 'p:kp vfs_read\np:kp vfs_write\n');
    expect(type()).toBe(dyn.registry.event('kprobes', 'kp'));
    dyn.write('dynamic_events', '-:kp vfs_read\n');
    expect(type()).toBe(dyn.registry.event('kprobes', 'kp'));
    dyn.write('dynamic_events', '-:kp\n');
    expect(type()).toBeUndefined();
  });

  it('an eprobe holds the dynamic event it is attached to', () => {
    const reg = new DynEventRegistry(env);
    reg.write('dynamic_events', 'f:fp vfs_read\ne:ep fprobes.fp a=$__probe_ip');
    expect(reg.write('dynamic_events', '-:fprobes/fp').errno).toBe('EBUSY');
    expect(reg.write('dynamic_events', '-:ep').errno).toBe(0);
    expect(reg.write('dynamic_events', '-:fprobes/fp').errno).toBe(0);
  });

  it('reports a release so the file layer can reset the buffers', () => {
    const reg = new DynEventRegistry(env);
    expect(reg.write('dynamic_events', '-:nothing').resetBuffers).toBe(true);
    expect(reg.write('dynamic_events', '-').resetBuffers).toBe(false);
  });

  it('compiles arguments to fetch programs', () => {
    const reg = new DynEventRegistry(env);
    reg.write('dynamic_events', 'p:kp vfs_read a=+8(+0(%di)):u32 s=$comm b=%si:b3@2/8 f=@jiffies');
    const [a, s, b, f] = tpOf(reg.list[0]).args;
    expect(a.code.map((c) => c.op)).toEqual(['REG', 'DEREF', 'ST_MEM', 'END']);
    expect(a.code[0].param).toBe(112);
    expect(a.code[2]).toMatchObject({ offset: 8, size: 4 });
    expect(s.code.map((c) => c.op)).toEqual(['COMM', 'ST_STRING', 'END']);
    expect(b.code.map((c) => c.op)).toEqual(['REG', 'ST_RAW', 'MOD_BF', 'END']);
    expect(b.code[2]).toMatchObject({ lshift: 3, rshift: 5, basesize: 1 });
    expect(f.code.map((c) => c.op)).toEqual(['NOP_SYMBOL', 'IMM', 'ST_MEM', 'END']);
    expect(f.code[1].immediate).toBe(env.kallsyms.lookupName('jiffies')!.addr);
  });

  it('reads BTF field paths as dereference chains and bitfields', () => {
    const reg = new DynEventRegistry(env);
    expect(reg.write('dynamic_events', 'f:fp vfs_read file->f_path.dentry->d_name.name:string').errno).toBe(0);
    const [arg] = tpOf(reg.list[0]).args;
    expect(arg.code.map((c) => c.op)).toEqual(['ARG', 'DEREF', 'DEREF', 'ST_STRING', 'END']);
    expect(reg.write('dynamic_events', 'f:fp2 consume_skb skb->pkt_type').errno).toBe(0);
    const [bf] = tpOf(reg.list[1]).args;
    expect(bf.code.map((c) => c.op)).toEqual(['ARG', 'ST_MEM', 'MOD_BF', 'END']);
    expect(bf.type.name).toBe('u8');
  });

  it('saves entry arguments for return probes', () => {
    const reg = new DynEventRegistry(env);
    expect(reg.write('dynamic_events', 'f:fp vfs_read%return $arg1 $arg3 $retval x=$arg1').errno).toBe(0);
    expect(reg.write('dynamic_events', 'f:fq vfs_read%return count file $retval').errno).toBe(0);
    const tp = tpOf(reg.list[0]);
    expect(tp.entryArgs).toEqual([0, 2]);
    expect(tp.args.map((a) => a.code[0])).toMatchObject([{ op: 'EDATA', offset: 0 }, { op: 'EDATA', offset: 8 }, { op: 'RETVAL' }, { op: 'EDATA', offset: 0 }]);
  });
});
