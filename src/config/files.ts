/**
 * Bounded, non-blocking reads of the files a configuration names (the config file, API key
 * files). `readFileSync` on a FIFO blocks until a writer appears and on `/dev/zero` never ends;
 * both once hung `validate-config` and `run`. Here the file is opened without blocking, must be a
 * regular file, and is read only up to a size limit.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** Largest config (or API key) file read. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** A file that is not a regular file, or too large; `code` feeds `describeFileError`. */
export class UnsuitableFileError extends Error {
  constructor(
    readonly code: 'ENOTREG' | 'EFBIG' | 'EISDIR',
    message: string,
  ) {
    super(message);
    this.name = 'UnsuitableFileError';
  }
}

/** Reads `path` as UTF-8 text: regular files only, at most `maxBytes`. Throws fs errors. */
export function readBoundedText(path: string, maxBytes: number): string {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const info = fstatSync(fd);
    refuseUnsuitable(info, maxBytes);
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(info.size + 1, 1)));
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      // A file that grows while being read is still cut at the limit.
      if (length > maxBytes) throw new UnsuitableFileError('EFBIG', 'file too large');
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Throws unless `info` is a regular file of at most `maxBytes`. */
function refuseUnsuitable(info: Stats, maxBytes: number): void {
  if (info.isDirectory()) throw new UnsuitableFileError('EISDIR', 'is a directory');
  if (!info.isFile()) throw new UnsuitableFileError('ENOTREG', 'not a regular file');
  if (info.size > maxBytes) throw new UnsuitableFileError('EFBIG', 'file too large');
}

/**
 * `readBoundedText` without blocking the event loop, for files read while the daemon runs or
 * starts (its state files): the same refusals, checked on the open descriptor before any read, so
 * no read of a FIFO or a device can hold a thread of the pool (which would also hold the exit).
 */
export async function readBoundedTextAsync(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const info = await handle.stat();
    refuseUnsuitable(info, maxBytes);
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, info.size + 1));
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      // A file that grows while being read is still cut at the limit.
      if (length > maxBytes) throw new UnsuitableFileError('EFBIG', 'file too large');
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}
