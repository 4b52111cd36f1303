/**
 * The fgraph shadow stack of a task (fgraph.c): 4096 bytes of longs holding,
 * per traced call, a frame (return address, function, return-address slot),
 * optional per-fgraph_ops data words, and a top word whose low bits give the
 * distance back to the frame and whose type bits say what it is (bitmap of
 * the fgraph_ops wanting a return callback, or a data block). The top 16
 * words are per-fgraph_ops task variables.
 */

export const SHADOW_STACK_SIZE = 4096;
/** Longs in a shadow stack. */
const SHADOW_STACK_OFFSET = SHADOW_STACK_SIZE / 8;
/** fgraph_ops slots (FGRAPH_ARRAY_SIZE): one bit each in the bitmap word, one task variable each. */
export const FGRAPH_ARRAY_SIZE = 16;
/** Longs of struct ftrace_ret_stack on x86_64: ret, func, retp. */
export const FGRAPH_FRAME_OFFSET = 3;
/** Highest word a new frame may reach (room is left for the top word and the task variables). */
export const SHADOW_STACK_MAX_OFFSET = SHADOW_STACK_OFFSET - (FGRAPH_FRAME_OFFSET + 1 + FGRAPH_ARRAY_SIZE);
/** Largest fgraph_reserve_data(): 32 longs. */
export const FGRAPH_MAX_DATA_SIZE = 8 * 32;

const OFFSET_MASK = 0x3ff;
const TYPE_SHIFT = 10;
const TYPE_MASK = 3;
const FGRAPH_TYPE_RESERVED = 0;
const FGRAPH_TYPE_BITMAP = 1;
export const FGRAPH_TYPE_DATA = 2;
const INDEX_SHIFT = 12;
const INDEX_MASK = 0xffff;
const DATA_SHIFT = 12;
const DATA_MASK = 0x1f;
const DATA_INDEX_SHIFT = 17;
const DATA_INDEX_MASK = 0xf;

/**
 * Meta words (the top word of a frame, data words) fit in 32 bits: they are
 * read and written through a 32-bit view of the stack (`ShadowStack.meta`),
 * without BigInt arithmetic. These take and give the low half.
 */
export function wordOffset(w: number): number {
  return w & OFFSET_MASK;
}

export function wordType(w: number): number {
  return (w >>> TYPE_SHIFT) & TYPE_MASK;
}

export function bitmapOf(w: number): number {
  return (w >>> INDEX_SHIFT) & INDEX_MASK;
}

export function dataIndexOf(w: number): number {
  return (w >>> DATA_INDEX_SHIFT) & DATA_INDEX_MASK;
}

/** Size in longs of a data block (the field holds size - 1). */
export function dataSizeOf(w: number): number {
  return ((w >>> DATA_SHIFT) & DATA_MASK) + 1;
}

export const RESERVED_WORD = (FGRAPH_TYPE_RESERVED << TYPE_SHIFT) | FGRAPH_FRAME_OFFSET;

export function bitmapWord(bitmap: number): number {
  return ((bitmap << INDEX_SHIFT) | (FGRAPH_TYPE_BITMAP << TYPE_SHIFT) | FGRAPH_FRAME_OFFSET) >>> 0;
}

export function dataWord(idx: number, sizeWords: number, offset: number): number {
  return ((idx << DATA_INDEX_SHIFT) | ((sizeWords - 1) << DATA_SHIFT) | (FGRAPH_TYPE_DATA << TYPE_SHIFT) | offset) >>> 0;
}

/** The meta word at long `i`. */
export function metaAt(meta: Uint32Array, i: number): number {
  return meta[2 * i]!;
}

/** Writes a meta word at long `i` (the high half zero). */
export function setMeta(meta: Uint32Array, i: number, w: number): void {
  meta[2 * i] = w;
  meta[2 * i + 1] = 0;
}

/** Index of the first task variable (SHADOW_STACK_TASK_VARS). */
export const TASK_VARS = SHADOW_STACK_OFFSET - FGRAPH_ARRAY_SIZE;

/** A task's shadow stack: its longs, and the same memory as 32-bit halves for the meta words. */
export interface ShadowStack {
  readonly words: BigUint64Array;
  readonly meta: Uint32Array;
}

/** A fresh shadow stack, task variables zeroed. */
export function newShadowStack(): ShadowStack {
  const words = new BigUint64Array(SHADOW_STACK_OFFSET);
  return { words, meta: new Uint32Array(words.buffer) };
}
