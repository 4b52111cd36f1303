/**
 * The comm cache the output uses for `TASK-PID` (saved_cmdlines,
 * saved_cmdlines_size) and the pid → tgid map (saved_tgids).
 *
 * The cache has the kernel's shape: a fixed number of slots handed out round
 * robin, indexed by pid modulo PID_MAX_DEFAULT, so an old pid's comm is lost
 * when its slot is reused and lookups of it give `<...>`.
 */
import { fail } from '../kernel/errno.js';

const PID_MAX_DEFAULT = 0x8000;
const TASK_COMM_LEN = 16;
/** sizeof(struct saved_cmdlines_buffer) on x86_64 (map_pid_to_cmdline[] and friends). */
const SAVEDCMD_HEADER = 131096;
/** Bytes one slot takes: the comm and its pid. */
const SLOT_SIZE = TASK_COMM_LEN + 4;
const NO_CMDLINE_MAP = -1;

/** Slots an allocation for `val` entries really gives (rounded up to whole pages of 2^order). */
function cmdlineSlotsFor(val: number): number {
  const want = SAVEDCMD_HEADER + val * SLOT_SIZE;
  let size = 4096;
  while (size < want) size *= 2;
  return Math.floor((size - SAVEDCMD_HEADER) / SLOT_SIZE);
}

export class SavedCmdlines {
  private mapPidToCmdline = new Int32Array(PID_MAX_DEFAULT + 1).fill(NO_CMDLINE_MAP);
  private mapCmdlineToPid!: Int32Array;
  private comms!: string[];
  private idx = 0;
  /** pid → tgid, allocated the first time record-tgid is set. */
  private tgids: Map<number, number> | null = null;

  constructor(entries = 128) {
    this.allocate(entries);
  }

  get size(): number {
    return this.comms.length;
  }

  private allocate(val: number): void {
    const n = cmdlineSlotsFor(val);
    this.mapPidToCmdline.fill(NO_CMDLINE_MAP);
    this.mapCmdlineToPid = new Int32Array(n).fill(NO_CMDLINE_MAP);
    this.comms = new Array<string>(n).fill('');
    this.idx = 0;
  }

  /** saved_cmdlines_size write: 1..PID_MAX_DEFAULT, everything saved so far is dropped. */
  resize(val: number): void {
    if (!val || val > PID_MAX_DEFAULT) fail('EINVAL');
    this.allocate(val);
  }

  /** trace_save_cmdline(). */
  save(pid: number, comm: string): void {
    if (!pid) return;
    const tpid = pid & (PID_MAX_DEFAULT - 1);
    let idx = this.mapPidToCmdline[tpid];
    if (idx === NO_CMDLINE_MAP) {
      idx = (this.idx + 1) % this.comms.length;
      this.mapPidToCmdline[tpid] = idx;
      this.idx = idx;
    } else if (this.mapCmdlineToPid[idx] === pid && this.comms[idx] === comm) {
      return;
    }
    this.mapCmdlineToPid[idx] = pid;
    this.comms[idx] = comm.slice(0, TASK_COMM_LEN - 1);
  }

  /** trace_find_cmdline(): `<idle>` for pid 0, `<...>` when not known. */
  find(pid: number): string {
    if (!pid) return '<idle>';
    if (pid < 0) return '<XXX>';
    const map = this.mapPidToCmdline[pid & (PID_MAX_DEFAULT - 1)];
    if (map !== NO_CMDLINE_MAP && this.mapCmdlineToPid[map] === pid) return this.comms[map];
    return '<...>';
  }

  /** saved_cmdlines: `pid comm` for every slot in use, in slot order. */
  show(): string {
    let out = '';
    for (let i = 0; i < this.mapCmdlineToPid.length; i++) {
      const pid = this.mapCmdlineToPid[i];
      if (pid === NO_CMDLINE_MAP) continue;
      out += `${pid} ${this.find(pid)}\n`;
    }
    return out;
  }

  get tgidMapAllocated(): boolean {
    return this.tgids !== null;
  }

  allocTgidMap(): void {
    this.tgids ??= new Map();
  }

  saveTgid(pid: number, tgid: number): void {
    if (pid && this.tgids) this.tgids.set(pid, tgid);
  }

  /** trace_find_tgid(): 0 when unknown. */
  findTgid(pid: number): number {
    return this.tgids?.get(pid) ?? 0;
  }

  /** saved_tgids: `pid tgid` by pid. */
  showTgids(): string {
    if (!this.tgids) return '';
    return [...this.tgids.entries()]
      .filter(([, t]) => t !== 0)
      .sort((a, b) => a[0] - b[0])
      .map(([p, t]) => `${p} ${t}\n`)
      .join('');
  }
}
