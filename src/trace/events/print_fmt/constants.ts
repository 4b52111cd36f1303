/**
 * Enum constants and kernel variables that some print fmts name without the
 * kernel having resolved them (no TRACE_DEFINE_ENUM for them): the compiled
 * TP_printk() knows their values, so the interpreter needs them too.
 */
import type { KernelProfile } from '../../../kernel/profiles/profile.js';

const HRTIMER_MODES: Record<string, number> = {
  HRTIMER_MODE_ABS: 0x0, HRTIMER_MODE_REL: 0x1, HRTIMER_MODE_PINNED: 0x2, HRTIMER_MODE_SOFT: 0x4, HRTIMER_MODE_HARD: 0x8,
  HRTIMER_MODE_ABS_PINNED: 0x2, HRTIMER_MODE_REL_PINNED: 0x3, HRTIMER_MODE_ABS_SOFT: 0x4, HRTIMER_MODE_REL_SOFT: 0x5,
  HRTIMER_MODE_ABS_PINNED_SOFT: 0x6, HRTIMER_MODE_REL_PINNED_SOFT: 0x7, HRTIMER_MODE_ABS_HARD: 0x8, HRTIMER_MODE_REL_HARD: 0x9,
  HRTIMER_MODE_ABS_PINNED_HARD: 0xa, HRTIMER_MODE_REL_PINNED_HARD: 0xb,
};

const TCP_STATES: Record<string, number> = {
  TCP_ESTABLISHED: 1, TCP_SYN_SENT: 2, TCP_SYN_RECV: 3, TCP_FIN_WAIT1: 4, TCP_FIN_WAIT2: 5, TCP_TIME_WAIT: 6, TCP_CLOSE: 7,
  TCP_CLOSE_WAIT: 8, TCP_LAST_ACK: 9, TCP_LISTEN: 10, TCP_CLOSING: 11, TCP_NEW_SYN_RECV: 12,
};

const IOPRIO: Record<string, number> = { IOPRIO_CLASS_NONE: 0, IOPRIO_CLASS_RT: 1, IOPRIO_CLASS_BE: 2, IOPRIO_CLASS_IDLE: 3, IOPRIO_CLASS_INVALID: 7 };

/** Inode state bits: the dirty bits start at the profile's inodeDirtyFirstBit (a bit below them got reserved). */
function inodeStates(profile: KernelProfile): Record<string, number> {
  const names = ['I_DIRTY_SYNC', 'I_DIRTY_DATASYNC', 'I_DIRTY_PAGES', 'I_WILL_FREE', 'I_FREEING', 'I_CLEAR', 'I_REFERENCED', 'I_LINKABLE', 'I_DIRTY_TIME', 'I_WB_SWITCH', 'I_OVL_INUSE', 'I_CREATING', 'I_DONTCACHE', 'I_SYNC_QUEUED', 'I_PINNING_NETFS_WB'];
  const first = profile.inodeDirtyFirstBit;
  const out: Record<string, number> = { I_NEW: 1, I_SYNC: 2, I_LRU_ISOLATING: 4 };
  names.forEach((n, i) => (out[n] = 2 ** (first + i)));
  return out;
}

const cache = new Map<KernelProfile, ReadonlyMap<string, bigint>>();

export function printFmtConstants(profile: KernelProfile): ReadonlyMap<string, bigint> {
  let m = cache.get(profile);
  if (!m) {
    const all: Record<string, number | bigint> = {
      ...HRTIMER_MODES,
      ...TCP_STATES,
      ...IOPRIO,
      ...inodeStates(profile),
      // x86_64 without KASLR of the memory map: where struct pages start.
      vmemmap_base: 0xffffea0000000000n,
      page_offset_base: 0xffff888000000000n,
    };
    m = new Map(Object.entries(all).map(([k, v]) => [k, BigInt(v)]));
    cache.set(profile, m);
  }
  return m;
}
