/**
 * What says a state file changed since it was last read (the key file, the webhook subscriptions):
 * its inode, size and modification time, or 'missing'. Their writers replace them whole (a new
 * inode), and the time alone can repeat within the kernel's coarse file clock. Errors other than
 * a missing file are thrown.
 */
import { statSync } from 'node:fs';

export function fileStamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
}
