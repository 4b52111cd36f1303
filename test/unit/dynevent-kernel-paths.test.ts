/**
 * Probe events fired by the emulated kernel's own call paths: a read(2) of a
 * tracefs file runs ksys_read → vfs_read with the real arguments, an open
 * runs do_sys_openat2 with the user's path string, so kprobes, kretprobes and
 * fprobes there record what the real kernel's would (the file's name through
 * %pD, the user string through ustring, the bytes read as $retval).
 */
import { describe, expect, it } from 'vitest';
import { File, O_RDONLY } from '../../src/tracefs/node.js';
import { kernelEmu } from '../helpers/kernel.js';
import { echo, traceLines } from '../helpers/tracefs.js';
import { SERIES, type Series } from '../../src/kernel/series.js';

const ROOT = { pid: 4321, uid: 0, gid: 0 };

/** Where ksys_read's call of vfs_read returns on each real kernel. */
const KSYS_READ_RETURN: Record<Series, string> = { '7.2': '0x7b', '7.3': '0x6b', '6.12': '0x6f' };

function setup(series: Series = '7.2') {
  const e = kernelEmu({ series });
  e.proc.set({ pid: ROOT.pid, comm: 'cat', ppid: 1, startTime: 1 });
  e.fs.root.add(
    new File('myfile', 0o644, {
      names: { open: 'tracing_open_generic', read: 'tracing_readme_read' },
      read: (_f, size, pos) => Buffer.from('line one\nline two\n'.slice(pos, pos + size)),
    }),
  );
  const w = (path: string, text: string, append = false) => echo(e.fs, path, text, append, ROOT);
  const lines = async () => traceLines(await e.fs.readFile('trace', ROOT));
  return { ...e, w, lines };
}

describe.each(SERIES)('probe events on the kernel paths (%s)', (series) => {
  it('kprobe, kretprobe and fprobe events on vfs_read see the read of a file', async () => {
    const { fs, w, lines, k } = setup(series);
    await w('dynamic_events', 'p:kp vfs_read name=$arg1:%pD count=$arg3:u64 c=$comm\n');
    await w('dynamic_events', 'r:kr vfs_read ret=$retval:s64 cnt=$arg3:u64\n', true);
    await w('dynamic_events', 'f:fx vfs_read%return file:%pD ret=$retval\n', true);
    await w('events/kprobes/enable', '1\n');
    await w('events/fprobes/enable', '1\n');
    const h = await fs.open('myfile', O_RDONLY, ROOT);
    await h.read(4096, 0);
    h.release();
    await w('events/kprobes/enable', '0\n');
    await w('events/fprobes/enable', '0\n');
    const got = (await lines()).map((l) => l.replace(/^.*?: /, ''));
    const ksys = k.symbols.lookupName('ksys_read')!;
    const ret = KSYS_READ_RETURN[series];
    const retSite = `ksys_read+${ret}/0x${ksys.size.toString(16)}`;
    expect(got).toContain(`kp: (vfs_read+0x4/0x${k.symbols.lookupName('vfs_read')!.size.toString(16)}) name="myfile" count=4096 c="cat"`);
    expect(got.some((l) => l.startsWith(`kr: (`) && l.endsWith(' <- vfs_read) ret=18 cnt=4096'))).toBe(true);
    expect(got.some((l) => l.startsWith(`fx: (${retSite} <- vfs_read)`) || l.startsWith('fx: ([unknown/kretprobe\'d] <- vfs_read)'))).toBe(true);
    expect(got.find((l) => l.startsWith('fx:'))).toMatch(/ arg1="myfile" ret=18$/);
  });

  it('a process that changed directory between two calls made a chdir(): sys_enter_chdir and an eprobe on it see the path', async () => {
    const { w, lines, proc } = setup(series);
    proc.set({ pid: ROOT.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/root' });
    await w('dynamic_events', 'e:eprobe_chdir syscalls/sys_enter_chdir file=+0($filename):ustring\n', true);
    await w('events/eprobes/eprobe_chdir/enable', '1\n');
    proc.set({ pid: ROOT.pid, comm: 'sh', ppid: 1, startTime: 1, cwd: '/sys/kernel/tracing' });
    await w('events/eprobes/eprobe_chdir/enable', '0\n');
    const got = await lines();
    expect(got.filter((l) => l.includes('eprobe_chdir'))).toHaveLength(1);
    expect(got.find((l) => l.includes('eprobe_chdir'))).toMatch(/ sh-4321 .* eprobe_chdir: \(syscalls\.sys_enter_chdir\) file="\/sys\/kernel\/tracing"$/);
  });

  it('a ustring of do_sys_openat2\'s filename reads the path the process passed', async () => {
    const { fs, w, lines } = setup(series);
    await w('kprobe_events', 'p:myevent2 do_sys_openat2 path=+0($arg2):ustring path2=+u0($arg2):string bad=+0($arg2):string\n');
    await w('events/kprobes/enable', '1\n');
    (await fs.open('myfile', O_RDONLY, ROOT)).release();
    await w('events/kprobes/enable', '0\n');
    const got = await lines();
    expect(got.some((l) => /myevent2: \(do_sys_openat2\+0x[0-9a-f]+\/0x[0-9a-f]+\) path="[^"]*myfile" path2="[^"]*myfile" bad=\(fault\)$/.test(l))).toBe(true);
  });

  it('vfs_open gets the struct file path_openat made, named after the file (%pD)', async () => {
    const { fs, w, lines } = setup(series);
    await w('kprobe_events', 'p:vo vfs_open f=$arg2:%pD\n');
    await w('events/kprobes/enable', '1\n');
    (await fs.open('myfile', O_RDONLY, ROOT)).release();
    await w('events/kprobes/enable', '0\n');
    expect((await lines()).some((l) => /vo: \(vfs_open\+0x[0-9a-f]+\/0x[0-9a-f]+\) f="myfile"$/.test(l))).toBe(true);
  });

  it('adding an event calls eventfs_create_dir with its name (kprobe_args_string / _char)', async () => {
    const { w, lines } = setup(series);
    await w('kprobe_events', 'p:testprobe eventfs_create_dir arg1=+0(%di):string arg2=+0(%di):char[4] c=+0(%di):char\n');
    await w('events/kprobes/testprobe/enable', '1\n');
    await w('kprobe_events', 'p:test kernel_clone\n', true);
    await w('events/kprobes/testprobe/enable', '0\n');
    expect((await lines()).some((l) => / testprobe: \(eventfs_create_dir\+0x[0-9a-f]+\/0x[0-9a-f]+\) arg1="test" arg2=\{'t','e','s','t'\} c='t'$/.test(l))).toBe(true);
  });

  it('a fork runs kernel_clone: $stack, $comm and typed stack slots (kprobe_args, _comm, _type)', async () => {
    const { w, lines, host } = setup(series);
    const { procEventLine } = await import('../../src/host/cn_proc.js');
    await w('kprobe_events', 'p:testprobe kernel_clone $stack $stack0 +0($stack) comm=$comm s=$stack0:s32 u=$stack0:u32 x=$stack0:x32 b=$stack0:b4@4/32\n');
    await w('events/kprobes/testprobe/enable', '1\n');
    procEventLine(host.mirror, `F 1 ${ROOT.pid} ${ROOT.pid} 4401 4401`);
    await w('events/kprobes/testprobe/enable', '0\n');
    const l = (await lines()).find((x) => x.includes('testprobe:'));
    expect(l).toMatch(/ testprobe: \(kernel_clone\+0x[0-9a-f]+\/0x[0-9a-f]+\) arg1=0x[0-9a-f]+ arg2=0x[0-9a-f]+ arg3=0x[0-9a-f]+ comm="cat" s=-?\d+ u=\d+ x=0x[0-9a-f]+ b=\d+$/);
    const [, s32, u32, x32, b] = / s=(-?\d+) u=(\d+) x=0x([0-9a-f]+) b=(\d+)$/.exec(l!)!;
    expect(BigInt.asUintN(32, BigInt(s32))).toBe(BigInt(u32));
    expect(BigInt('0x' + x32)).toBe(BigInt(u32));
    expect(BigInt(b)).toBe((BigInt(u32) >> 4n) & 0xfn);
  });

  it('@linux_proc_banner reads the kernel banner (kprobe_args_symbol)', async () => {
    const { w, lines, k, fs, host } = setup(series);
    const { procEventLine } = await import('../../src/host/cn_proc.js');
    const { linuxProcBanner: procBanner } = await import('../../src/kernel/version.js');
    await w('kprobe_events', 'p:testprobe_str kernel_clone arg1=@linux_proc_banner:string arg2=@linux_proc_banner:u8 arg3=@linux_proc_banner:b8@8/16\n');
    await w('events/kprobes/enable', '1\n');
    procEventLine(host.mirror, `F 1 ${ROOT.pid} ${ROOT.pid} 4402 4402`);
    await w('events/kprobes/enable', '0\n');
    void lines;
    const text = await fs.readFile('trace', ROOT);
    // the banner ends with a newline, which the trace line keeps
    expect(text).toContain(` arg1="${procBanner(k.profile.build)}" arg2=37 arg3=115\n`);
  });

  it('kprobe_profile counts the hits', async () => {
    const { fs, w } = setup(series);
    await w('kprobe_events', 'p:myevent vfs_read\n');
    await w('events/kprobes/myevent/enable', '1\n');
    for (let i = 0; i < 3; i++) {
      const h = await fs.open('myfile', O_RDONLY, ROOT);
      await h.read(4096, 0);
      h.release();
    }
    await w('events/kprobes/myevent/enable', '0\n');
    expect(await fs.readFile('kprobe_profile', ROOT)).toMatch(/^ {2}myevent {38}\s+([3-9]|\d\d+)\s+0\n$/);
  });
});

describe('uprobes', () => {
  it('a uprobe on a program\'s entry point hits when a process execs it; uprobe_profile counts it', async () => {
    const { existsSync, realpathSync } = await import('node:fs');
    const { elfEntry } = await import('../../src/host/elf_entry.js');
    const bin = existsSync('/bin/sh') ? realpathSync('/bin/sh') : undefined;
    const entry = bin ? elfEntry(bin) : undefined;
    if (!bin || !entry) return;
    const { w, lines, k, fs, taskOf } = setup();
    await w('uprobe_events', `p:myevent ${bin}:0x${entry.fileOffset.toString(16)}\n`);
    await w('uprobe_events', `p:other ${bin}:0x${(entry.fileOffset + 1n).toString(16)}\n`, true);
    await w('events/uprobes/enable', '1\n');
    k.procs.exec(taskOf(ROOT), '/bin/sh', 'sh');
    await w('events/uprobes/enable', '0\n');
    const got = await lines();
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^\s+sh-4321\s+\[\d+\] \.{5} +\d+\.\d+: myevent: \(0x[0-9a-f]+\)$/);
    expect(await fs.readFile('uprobe_profile', ROOT)).toBe(
      `  ${bin} ${'myevent'.padEnd(44)} ${'1'.padStart(15)}\n  ${bin} ${'other'.padEnd(44)} ${'0'.padStart(15)}\n`,
    );
  });

  it('a uprobe on _init (DT_INIT, where 6.12\'s test probes the start of the r-xp mapping) hits too', async () => {
    const { existsSync, realpathSync } = await import('node:fs');
    const { elfEntry } = await import('../../src/host/elf_entry.js');
    const bin = existsSync('/bin/sh') ? realpathSync('/bin/sh') : undefined;
    const init = bin ? elfEntry(bin)?.init : undefined;
    if (!bin || !init) return;
    const { w, lines, k, taskOf } = setup('6.12');
    await w('uprobe_events', `p:myevent ${bin}:0x${init.fileOffset.toString(16)}\n`);
    await w('events/uprobes/enable', '1\n');
    k.procs.exec(taskOf(ROOT), '/bin/sh', 'sh');
    await w('events/uprobes/enable', '0\n');
    expect((await lines()).filter((l) => l.includes('myevent:'))).toHaveLength(1);
  });
});
