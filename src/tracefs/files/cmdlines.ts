/** saved_cmdlines, saved_cmdlines_size and saved_tgids (top level only). */
import type { Tracing } from '../../trace/tracing.js';
import type { FileOps } from '../node.js';
import { seqRead } from '../seq_file.js';
import { simpleRead, writeUlong } from './common.js';

export function savedCmdlinesFile(tracing: Tracing): FileOps {
  return seqRead(() => tracing.cmdlines.show());
}

export function savedCmdlinesSizeFile(tracing: Tracing): FileOps {
  return {
    ...simpleRead(() => `${tracing.cmdlines.size}\n`),
    write(_f, data) {
      tracing.cmdlines.resize(writeUlong(data));
      tracing.taskInfoChanged();
      return data.length;
    },
  };
}

export function savedTgidsFile(tracing: Tracing): FileOps {
  return seqRead(() => tracing.cmdlines.showTgids());
}
