import { destination as pinoDestination, pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Bytes of log lines gathered before one write to stdout. */
const BLOCK_BYTES = 4096;
/** The longest a line waits in the block, so a quiet process's lines still show up promptly. */
export const LOG_FLUSH_INTERVAL_MS = 500;

let stdout: ReturnType<typeof pinoDestination> | undefined;

/**
 * Stdout written in blocks, shared by every logger of the process. A synchronous write per line
 * was about a quarter of the CPU of a decide request (one line per request, one syscall per
 * line); blocks make that one write per few dozen lines. Sonic-boom's periodic flush bounds how
 * long a line waits, and pino flushes what is left when the process exits, however it exits
 * short of SIGKILL.
 */
const blockedStdout = () => (stdout ??= pinoDestination({ dest: 1, sync: false, minLength: BLOCK_BYTES, periodicFlush: LOG_FLUSH_INTERVAL_MS }));

/** The one logger: JSON lines on stdout, one child per service carrying its name. */
export function createLogger(service: string, level: LevelWithSilent = 'info'): Logger {
  return pino({ name: service, level, base: { service } }, blockedStdout());
}
