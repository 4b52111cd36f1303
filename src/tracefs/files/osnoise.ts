/** osnoise/ (trace_osnoise.c's init_tracefs()) and hwlat_detector/ (trace_hwlat.c's), with the tracers that own them. */
import { fail } from '../../kernel/errno.js';
import type { Hwlat } from '../../trace/hwlat_tracer.js';
import type { MinMaxParam, Osnoise } from '../../trace/osnoise/osnoise.js';
import type { TimerlatUserThread } from '../../trace/osnoise/timerlat_user.js';
import { Dir, File, type FileOps } from '../node.js';
import { parseUlong, seqRead } from '../seq_file.js';
import { simpleRead, writeText } from './common.js';

/** trace_min_max_fops: a u64, refused (EINVAL) outside the bounds other settings put on it. */
function minMaxFile(p: MinMaxParam): FileOps {
  return {
    ...simpleRead(() => `${p.get()}\n`),
    write(_f, data) {
      const v = parseUlong(data);
      if ((p.min && v < p.min()) || (p.max && v > p.max())) fail('EINVAL');
      p.set(v);
      return data.length;
    },
  };
}

export function osnoiseDir(os: Osnoise, nrCpus: number): Dir {
  const dir = new Dir('osnoise', 0o750);
  for (const [name, p] of Object.entries(os.params())) dir.add(new File(name, 0o640, minMaxFile(p)));
  dir.add(
    new File('cpus', 0o640, {
      ...simpleRead(() => os.showCpus()),
      write(_f, data) {
        if (data.length < 1) return 0;
        os.setCpus(data.toString('latin1'));
        return data.length;
      },
    }),
  );
  dir.add(
    new File('options', 0o640, {
      ...seqRead(() => os.showOptions()),
      write(_f, data) {
        os.writeOption(writeText(data, 256));
        return data.length;
      },
    }),
  );
  if (os.timerlat) {
    for (const [name, p] of Object.entries(os.timerlatParams())) dir.add(new File(name, 0o640, minMaxFile(p)));
    const perCpu = dir.add(new Dir('per_cpu', 0o750));
    for (let cpu = 0; cpu < nrCpus; cpu++) {
      const d = perCpu.add(new Dir(`cpu${cpu}`, 0o750));
      d.add(new File('timerlat_fd', 0o440, timerlatFdFile(os, cpu)));
    }
    dir.add(new File('print_stack', 0o640, minMaxFile(os.printStackParam())));
  }
  return dir;
}

/** timerlat_fd: the user-space workload's handle (timerlat -u): a read waits for the next period (timerlat_user.ts). */
function timerlatFdFile(os: Osnoise, cpu: number): FileOps {
  return {
    open(f) {
      f.private = os.user.open(f.task, cpu);
      f.nonseekable = true;
    },
    read(f, _size, _pos, abort) {
      return os.user.read(f.private as TimerlatUserThread, cpu, abort);
    },
    release(f) {
      if (f.private) os.user.release(f.private as TimerlatUserThread);
    },
  };
}

export function hwlatDir(hw: Hwlat): Dir {
  const dir = new Dir('hwlat_detector', 0o750);
  const { window, width } = hw.params();
  dir.add(new File('window', 0o640, minMaxFile(window!)));
  dir.add(new File('width', 0o640, minMaxFile(width!)));
  dir.add(
    new File('mode', 0o640, {
      ...seqRead(() => hw.showMode()),
      write(_f, data) {
        hw.setMode(writeText(data, 64));
        return data.length;
      },
    }),
  );
  return dir;
}
