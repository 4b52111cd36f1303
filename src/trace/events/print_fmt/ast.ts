/** The parsed form of a `print fmt:`: the format string and its argument expressions. */

/** A C type named in a cast or sizeof: its base words and pointer depth. */
export interface CType {
  base: string;
  ptr: number;
}

export type Expr =
  | { k: 'num'; v: bigint; unsigned: boolean; long: boolean }
  | { k: 'str'; v: string }
  /** REC->field */
  | { k: 'rec'; field: string }
  /** A bare identifier: a field name inside __get_str() and the like, or an unresolved constant. */
  | { k: 'id'; name: string }
  | { k: 'member'; obj: Expr; name: string }
  | { k: 'index'; obj: Expr; index: Expr }
  | { k: 'call'; fn: string; args: Expr[] }
  /** `{ mask, "name" }` entries of __print_flags / __print_symbolic. */
  | { k: 'list'; items: Expr[] }
  | { k: 'unary'; op: string; e: Expr }
  | { k: 'cast'; type: CType; e: Expr }
  | { k: 'sizeof'; type?: CType; e?: Expr }
  | { k: 'bin'; op: string; l: Expr; r: Expr }
  | { k: 'cond'; c: Expr; a: Expr; b: Expr }
  /** A GNU statement expression `({ int x = ...; expr; })` (min()/max() expand to one). */
  | { k: 'block'; vars: Array<{ name: string; type: CType; e: Expr }>; result: Expr };

export interface PrintFmt {
  fmt: string;
  args: Expr[];
}
