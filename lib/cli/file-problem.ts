import { dirname } from 'node:path';
import { UsageError } from './usage-error.js';

/** A file the person named that cannot be used, in words, naming it (never a raw ENOENT). */
export function fileProblem(what: string, file: string): (err: NodeJS.ErrnoException) => never {
  return (err) => {
    const why: Record<string, string> = {
      ENOENT:
        what === '--rejected'
          ? `the directory ${dirname(file)} does not exist; create it or choose another path`
          : 'no such file',
      EISDIR: 'it is a directory, not a file',
      EACCES: 'permission denied',
      EPERM: 'permission denied',
      ENOTDIR: 'a part of the path is not a directory',
      // issue 58 #15: no user may write there
      EROFS: 'the file system is mounted read-only; choose a path on a writable one',
    };
    const reason = why[err.code ?? ''] ?? err.message;
    throw new UsageError(`${what} ${file} cannot be ${what === '--rejected' ? 'written' : 'read'}: ${reason}`, {
      cause: err,
    });
  };
}
