/**
 * Files of the emulated kernel outside the tracefs, for whoever shows them at
 * their /proc paths (the `exec` namespace): their operations carry the
 * kernel's f_op names, so the system call paths (and the function tracers
 * watching them) run what the real kernel runs.
 */
import { fail } from '../../kernel/errno.js';
import type { Ftrace } from '../../ftrace/ftrace.js';
import type { Kernel } from '../../kernel/kernel.js';
import { kallsymsText } from '../../kernel/kallsyms.js';
import { procModulesText } from '../../kernel/module.js';
import { procVersion as procVersionText } from '../../kernel/version.js';
import type { FileOps } from '../node.js';
import { seqRead, sliceAt } from '../seq_file.js';
import { stackTracerEnabledFile } from './ftrace_stack.js';

/** A sysctl (proc_sys_file_operations). */
const PROC_SYS = { open: 'proc_sys_open', read: 'proc_sys_read', write: 'proc_sys_write', poll: 'proc_sys_poll', fops: 'proc_sys_file_operations' };

/** /proc/sys/kernel/stack_tracer_enabled. */
export function procStackTracerEnabled(ftrace: Ftrace): FileOps {
  return { ...stackTracerEnabledFile(ftrace), names: PROC_SYS };
}

/**
 * /proc/interrupts: a seq file without a write of its own, so a write goes
 * through proc_reg_write() and fails with EIO (as fgraph-retval.tc expects).
 * Reading shows `counts()`: the emulated kernel has no interrupts of its own
 * to show (the daemon shows the machine's).
 */
export function procInterrupts(counts: () => string): FileOps {
  return {
    ...seqRead(counts),
    write() {
      fail('EIO');
    },
    names: { open: 'proc_reg_open', read: 'proc_reg_read_iter', write: 'proc_reg_write', release: 'proc_reg_release', llseek: 'proc_reg_llseek', fops: 'proc_iter_file_ops' },
  };
}

/** /proc/version, from the emulated kernel's banner (version_proc_show()). */
export function procVersion(kernel: Kernel): FileOps {
  return {
    ...seqRead(() => procVersionText(kernel.profile.build)),
    names: { open: 'proc_reg_open', read: 'proc_reg_read_iter', write: 'proc_reg_write', release: 'proc_reg_release', llseek: 'proc_reg_llseek', fops: 'proc_iter_file_ops' },
  };
}

const PROC_REG = { open: 'proc_reg_open', read: 'proc_reg_read_iter', write: 'proc_reg_write', release: 'proc_reg_release', llseek: 'proc_reg_llseek', fops: 'proc_iter_file_ops' };

/** /proc/kallsyms: the kernel's symbols with those of the modules loaded now. */
export function procKallsyms(kernel: Kernel): FileOps {
  return {
    read(f, size, pos) {
      const st = f.private as { text?: Buffer } | undefined;
      const text = pos === 0 || !st?.text ? kallsymsText(kernel.symbols) : st.text;
      f.private = { text };
      return sliceAt(text, size, pos);
    },
    names: PROC_REG,
  };
}

/** /proc/modules (what lsmod reads). */
export function procModules(kernel: Kernel): FileOps {
  return { ...seqRead(() => procModulesText(kernel.modules)), names: PROC_REG };
}
