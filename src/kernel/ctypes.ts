/**
 * C types of the emulated kernel, as BTF describes them: function prototypes
 * for BTF probe arguments (`file`, `$arg1`, `$retval`), struct layouts for
 * field access (`file->f_path.dentry->d_name.name`). The graph may be cyclic
 * (struct list_head points to itself): implementations resolve lazily.
 */
export type CType = VoidType | IntType | FloatType | PtrType | ArrayType | StructType | EnumType | TypedefType | FuncType | QualType;

interface VoidType {
  kind: 'void';
}

interface IntType {
  kind: 'int';
  name: string;
  /** Bytes. */
  size: number;
  signed: boolean;
  /** char / signed char / unsigned char. */
  char: boolean;
  bool: boolean;
}

interface FloatType {
  kind: 'float';
  name: string;
  size: number;
}

export interface PtrType {
  kind: 'ptr';
  readonly target: CType;
}

export interface ArrayType {
  kind: 'array';
  readonly elem: CType;
  len: number;
}

export interface CMember {
  name: string;
  readonly type: CType;
  /** Offset from the start of the struct, in bits. */
  bitOffset: number;
  /** Width for bitfields, 0 otherwise. */
  bitSize: number;
}

export interface StructType {
  kind: 'struct' | 'union';
  /** '' for anonymous ones. */
  name: string;
  size: number;
  readonly members: readonly CMember[];
}

export interface EnumType {
  kind: 'enum';
  name: string;
  size: number;
  signed: boolean;
}

export interface TypedefType {
  kind: 'typedef';
  name: string;
  readonly target: CType;
}

export interface FuncType {
  kind: 'func';
  readonly proto: FuncProto;
}

/** const / volatile / restrict / type_tag wrappers. */
export interface QualType {
  kind: 'const' | 'volatile' | 'restrict' | 'type_tag';
  readonly target: CType;
  /** The tag of a type_tag ("user" for __user, "rcu", "percpu"). */
  readonly tag?: string;
}

export interface FuncParam {
  name: string;
  readonly type: CType;
}

export interface FuncProto {
  readonly params: readonly FuncParam[];
  /** `{kind:'void'}` for void functions. */
  readonly ret: CType;
  variadic: boolean;
}

/** The type database of a kernel (built-in model, or the host's /sys/kernel/btf/vmlinux). */
export interface TypeDb {
  /** Prototype of a kernel function, if BTF describes it. */
  funcProto(name: string): FuncProto | undefined;
  /** A struct or union by name (the first of either, or of `kind`; '' names an anonymous one). */
  struct(name: string, kind?: 'struct' | 'union'): StructType | undefined;
}

/** Strips typedefs and qualifiers: the type a value really has. */
export type ResolvedType = Exclude<CType, TypedefType | QualType>;

export function resolveType(t: CType): ResolvedType {
  for (;;) {
    switch (t.kind) {
      case 'typedef':
      case 'const':
      case 'volatile':
      case 'restrict':
      case 'type_tag':
        t = t.target;
        break;
      default:
        return t;
    }
  }
}

/** Size in bytes of a value of this type (pointers are 8 on x86_64). */
export function sizeOfType(t: CType): number {
  const r = resolveType(t);
  switch (r.kind) {
    case 'void':
    case 'func':
      return 0;
    case 'ptr':
      return 8;
    case 'array':
      return r.len * sizeOfType(r.elem);
    default:
      return r.size;
  }
}
