/**
 * System calls on the mount run the real kernel's paths in the calling
 * task: the functions in the order the real kernel calls them, with
 * arguments that agree with registers, the objects they point at laid out as
 * BTF says, and sys_enter / sys_exit around them.
 */
import { describe, expect, it } from 'vitest';
import { KernelError } from '../../src/kernel/errno.js';
import { File, O_RDONLY, O_WRONLY } from '../../src/tracefs/node.js';
import { inOrder, kernelEmu, recordCalls, recordEvents, SCHED_EVENTS } from '../helpers/kernel.js';
import { SERIES, type Series } from '../../src/kernel/series.js';

const ROOT = { pid: 4321, uid: 0, gid: 0 };

/** The function do_sys_openat2 opens through on each real kernel. */
const DO_OPEN: Record<Series, string> = { '7.2': 'do_file_open', '7.3': 'do_file_open', '6.12': 'do_filp_open' };

function setup(series: Series = '7.2') {
  const e = kernelEmu({ series });
  e.proc.set({ pid: ROOT.pid, comm: 'cat', ppid: 1, startTime: 1 });
  let data = 'line one\nline two\n';
  let written = '';
  e.fs.root.add(
    new File('myfile', 0o644, {
      names: { open: 'tracing_open_generic', read: 'tracing_readme_read', write: 'tracing_mark_write' },
      read: (_f, size, pos) => Buffer.from(data.slice(pos, pos + size)),
      write: (_f, d) => ((written += d.toString()), d.length),
    }),
  );
  return { ...e, setData: (s: string) => (data = s), written: () => written };
}

describe('system call paths', () => {
  it('read runs ksys_read → vfs_read → the file\'s read, with the arguments in registers', async () => {
    const { k, fs, taskOf } = setup();
    const h = await fs.open('myfile', O_RDONLY, ROOT);
    const calls = recordCalls(k);
    const evs = recordEvents(k, ['sys_enter', 'sys_exit']);
    const buf = await h.read(4096, 0);
    expect(buf.toString()).toBe('line one\nline two\n');
    const names = calls.map((c) => c.name);
    expect(inOrder(names, ['__x64_sys_read', 'ksys_read', 'vfs_read', 'rw_verify_area', 'security_file_permission', 'simple_read_from_buffer'])).toBe(true);
    const vr = calls.find((c) => c.name === 'vfs_read')!;
    // $arg1 is %di: the struct file, whose dentry is named after the file.
    const file = vr.regs.get('di');
    expect(vr.regs.arg(1)).toBe(file);
    const dentry = k.structs.get(file, 'file', 'f_path.dentry')!;
    expect(k.kernelMemory.readCString(k.structs.get(dentry, 'dentry', 'd_name.name')!)).toBe('myfile');
    expect(vr.regs.get('dx')).toBe(4096n);
    // $stack0: the return address at entry is ksys_read's call site of the real kernel.
    const ret = vr.ret;
    const at = k.symbols.lookup(ret)!;
    expect(`${at.sym.name}+0x${at.offset.toString(16)}`).toBe('ksys_read+0x7b');
    expect(vr.parent).toBe(ret);
    // sys_enter has the same arguments; sys_exit the bytes read.
    const enter = evs.find((e) => e.name === 'sys_enter')!;
    expect(enter.args.id).toBe(0);
    expect((enter.args.args as bigint[])[1]).toBe(vr.regs.get('si'));
    expect(evs.find((e) => e.name === 'sys_exit')!.args.ret).toBe(18n);
    // The bytes read are in the process's buffer once the call returns.
    const task = taskOf(ROOT);
    expect(task.mm!.read(vr.regs.get('si'), 8)!.toString()).toBe('line one');
  });

  it('$retval is %ax when the function returns (through a return trampoline)', async () => {
    const { k, fs } = setup();
    const h = await fs.open('myfile', O_RDONLY, ROOT);
    const exec = k.exec;
    const vfsRead = k.resolve('vfs_read')!;
    const TRAMP = 0xffffffff81fff000n;
    let saved = 0n;
    let retval = -1n;
    exec.patchFentry(vfsRead.id, true);
    exec.fentry = (_ip, _p, regs) => {
      saved = k.kernelMemory.readU64(regs.sp)!;
      k.kernelMemory.writeU64(regs.sp, TRAMP);
    };
    exec.trampolines.set(TRAMP, (regs) => {
      retval = regs.ax;
      return saved;
    });
    await h.read(5, 0);
    expect(retval).toBe(5n);
    expect(exec.corruptions).toBe(0);
  });

  it('write puts the bytes written in user memory, where vfs_write\'s buffer argument points', async () => {
    const { k, fs, written, taskOf } = setup();
    const calls = recordCalls(k, (n) => n === 'vfs_write' || n === 'ksys_write');
    await fs.writeFile('myfile', 'hello world\n', {}, ROOT);
    expect(written()).toBe('hello world\n');
    const vw = calls.find((c) => c.name === 'vfs_write')!;
    const task = taskOf(ROOT);
    expect(task.mm!.readCString(vw.regs.get('si'))).toBe('hello world\n');
    expect(vw.regs.get('dx')).toBe(12n);
    // $comm reads task->comm at its BTF offset.
    expect(k.kernelMemory.readCString(k.structs.addrOf(task.addr, 'task_struct', 'comm')!)).toBe('cat');
  });

  it('open runs do_sys_openat2 → do_file_open (do_filp_open in 6.12) → path_openat → vfs_open → do_dentry_open → the f_op open', async () => {
    for (const series of SERIES) {
      const { k, fs, taskOf } = setup(series);
      const calls = recordCalls(k);
      const h = await fs.open('myfile', O_WRONLY, ROOT);
      const names = calls.map((c) => c.name);
      const open = DO_OPEN[series];
      expect(inOrder(names, ['__x64_sys_openat', 'do_sys_openat2', open, 'path_openat', 'lookup_fast', 'may_open', 'vfs_open', 'do_dentry_open', 'security_locked_down', 'fd_install'])).toBe(true);
      // do_sys_openat2's filename is a user string: the path the process passed.
      const d = calls.find((c) => c.name === 'do_sys_openat2')!;
      expect(taskOf(ROOT).mm!.readCString(d.regs.get('si'))).toBe('/sys/kernel/tracing/myfile');
      h.release();
    }
  });

  it('close runs __fput, which puts the dentry (dput, %pd of the file)', async () => {
    const { k, fs } = setup();
    const h = await fs.open('myfile', O_RDONLY, ROOT);
    const calls = recordCalls(k);
    h.release();
    const names = calls.map((c) => c.name);
    expect(inOrder(names, ['__x64_sys_close', 'file_close_fd', 'filp_flush', '__fput', 'dput', 'mntput'])).toBe(true);
    const dput = calls.find((c) => c.name === 'dput')!;
    const name = k.structs.get(dput.regs.get('di'), 'dentry', 'd_name.name')!;
    expect(k.kernelMemory.readCString(name)).toBe('myfile');
  });

  it('a failed call unwinds with -errno through the functions on the way out', async () => {
    const { k, fs, taskOf } = setup();
    const evs = recordEvents(k, ['sys_exit']);
    await expect(fs.open('nosuchfile', O_RDONLY, ROOT)).rejects.toBeInstanceOf(KernelError);
    expect(evs[0]!.args.ret).toBe(-2n);
    expect(taskOf(ROOT).frames).toHaveLength(0);
  });

  it('mkdir of an instance runs vfs_mkdir → tracefs_syscall_mkdir and creates its directories', () => {
    const { k, fs } = setup();
    const calls = recordCalls(k);
    fs.mkdir('instances/foo', ROOT);
    const names = calls.map((c) => c.name);
    expect(inOrder(names, ['__x64_sys_mkdir', 'filename_create', 'vfs_mkdir', 'tracefs_syscall_mkdir', 'tracefs_create_dir', 'eventfs_create_events_dir', 'eventfs_create_dir'])).toBe(true);
    expect(names.filter((n) => n === 'eventfs_create_dir').length).toBeGreaterThan(100);
    const rm = recordCalls(k);
    fs.rmdir('instances/foo', ROOT);
    expect(inOrder(rm.map((c) => c.name), ['__x64_sys_rmdir', 'vfs_rmdir', 'tracefs_syscall_rmdir'])).toBe(true);
  });

  it('getdents64 of an eventfs directory iterates with eventfs_iterate, of another with dcache_readdir', () => {
    const { k, fs } = setup();
    const calls = recordCalls(k, (n) => n === 'eventfs_iterate' || n === 'dcache_readdir' || n === 'iterate_dir');
    fs.readdir('events/sched', ROOT);
    fs.readdir('instances', ROOT);
    expect(calls.map((c) => c.name)).toEqual(['iterate_dir', 'eventfs_iterate', 'iterate_dir', 'dcache_readdir']);
  });

  it('stat runs vfs_statx / vfs_getattr on the path', () => {
    const { k, fs } = setup();
    const calls = recordCalls(k);
    fs.stat('myfile', ROOT);
    expect(inOrder(calls.map((c) => c.name), ['__x64_sys_newfstatat', 'vfs_statx', 'lookup_fast', 'vfs_getattr_nosec', 'tracefs_getattr', 'cp_new_stat'])).toBe(true);
  });

  it('a read that waits sleeps inside its frames (sched_switch S), and is switched back in when woken', async () => {
    const { k, fs, taskOf } = setup();
    let wake!: (b: Buffer) => void;
    fs.root.add(new File('pipe', 0o444, { names: { read: 'tracing_read_pipe' }, read: () => new Promise<Buffer>((r) => (wake = r)) }));
    const h = await fs.open('pipe', O_RDONLY, ROOT);
    const task = taskOf(ROOT);
    const evs = recordEvents(k, ['sched_switch', 'sys_exit']);
    recordCalls(k, (n) => n === 'vfs_read');
    const p = h.read(100, 0);
    await new Promise((r) => setTimeout(r, 10));
    expect(task.frames.map((f) => f.fn.name)).toEqual(expect.arrayContaining(['do_syscall_64', 'vfs_read', 'tracing_read_pipe', 'schedule']));
    const out = evs.find((e) => e.name === 'sched_switch' && e.args.prev_pid === ROOT.pid)!;
    expect(out.args.prev_state).toBe(1);
    wake(Buffer.from('event\n'));
    expect((await p).toString()).toBe('event\n');
    const back = evs.filter((e) => e.name === 'sched_switch' && e.args.next_pid === ROOT.pid);
    expect(back.length).toBeGreaterThan(0);
    expect(evs[evs.length - 1]!.name).toBe('sys_exit');
    expect(evs[evs.length - 1]!.args.ret).toBe(6n);
    expect(task.frames).toHaveLength(0);
  });

  it('an interrupted read unwinds with -ERESTARTSYS inside the kernel', async () => {
    const { k, fs, taskOf } = setup();
    fs.root.add(
      new File('pipe2', 0o444, {
        read: (_f, _s, _p, abort) => new Promise<Buffer>((_r, rej) => abort.addEventListener('abort', () => rej(new KernelError('EINTR')))),
      }),
    );
    const h = await fs.open('pipe2', O_RDONLY, ROOT);
    const evs = recordEvents(k, ['sys_exit', ...SCHED_EVENTS]);
    const ac = new AbortController();
    const p = h.read(100, 0, ac.signal);
    await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(KernelError);
    expect(evs.find((e) => e.name === 'sys_exit')!.args.ret).toBe(-512n);
    expect(taskOf(ROOT).frames).toHaveLength(0);
  });

  it('a close that arrives while the task sleeps in another call runs without a path', async () => {
    const { k, fs } = setup();
    let wake!: (b: Buffer) => void;
    fs.root.add(new File('pipe3', 0o444, { read: () => new Promise<Buffer>((r) => (wake = r)) }));
    const a = await fs.open('pipe3', O_RDONLY, ROOT);
    const b = await fs.open('myfile', O_RDONLY, ROOT);
    const calls = recordCalls(k, (n) => n === '__x64_sys_close' || n === '__x64_sys_read');
    const p = a.read(10, 0);
    await new Promise((r) => setTimeout(r, 5));
    b.release();
    expect(calls.map((c) => c.name)).toEqual(['__x64_sys_read']);
    wake(Buffer.from('x'));
    await p;
  });

  it('a file opened unseen and written by another thread gives its fd back at close (fuzz: fds leaked, each call slower)', async () => {
    const { k, fs, proc } = setup();
    proc.set({ pid: ROOT.pid + 1, tgid: ROOT.pid, comm: 'cat', ppid: 1, startTime: 1 });
    const thread = { ...ROOT, pid: ROOT.pid + 1 };
    // opened while nothing looks: its struct file is made by the first call someone sees, the other thread's write
    const h = await fs.open('myfile', O_WRONLY, ROOT);
    const evs = recordEvents(k, ['sys_enter']);
    await h.write(Buffer.from('x'), 0, thread);
    h.release();
    const h2 = await fs.open('myfile', O_WRONLY, thread);
    await h2.write(Buffer.from('y'), 0, thread);
    h2.release();
    const writes = evs.filter((e) => e.pid === thread.pid && e.args.id === 1 /* write */);
    expect(writes.map((e) => (e.args.args as bigint[])[0])).toEqual([3n, 3n]);
  });

  it('lets other layers run kernel functions: eventfs_create_dir gets the event name in %di', () => {
    const { k, taskOf } = setup();
    const task = taskOf(ROOT);
    const calls = recordCalls(k, (n) => n === 'eventfs_create_dir');
    let made = false;
    k.call(task, 'eventfs_create_dir', [k.kmem.kstr('test')], () => (made = true));
    expect(made).toBe(true);
    expect(k.kernelMemory.readCString(calls[0]!.regs.get('di'))).toBe('test');
    expect(task.frames).toHaveLength(0);
  });
});
