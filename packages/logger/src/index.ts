import { destination as pinoDestination, pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Bytes of log lines gathered before one write to stdout. */
const BLOCK_BYTES = 4096;
/** The longest a line waits in the block, so a quiet process's lines still show up promptly. */
export const LOG_FLUSH_INTERVAL_MS = 500;

type Destination = ReturnType<typeof pinoDestination>;

let stdout: Destination | undefined;

/**
 * Stdout written in blocks, shared by every logger of the process. A synchronous write per line
 * was about a quarter of the CPU of a decide request (one line per request, one syscall per line);
 * blocks make that one write per few dozen lines. Pino flushes what is left when the process
 * exits, however it exits short of SIGKILL, and the timer bounds how long a line waits meanwhile.
 */
function blockedStdout(): Destination {
  if (!stdout) {
    const destination = pinoDestination({ dest: 1, sync: false, minLength: BLOCK_BYTES });
    setInterval(() => {
      // Pino ends it at exit, or on a broken pipe; sonic-boom's types leave `destroyed` out.
      if (!(destination as { destroyed?: boolean }).destroyed) destination.flush();
    }, LOG_FLUSH_INTERVAL_MS).unref();
    stdout = destination;
  }
  return stdout;
}

/** The one logger: JSON lines on stdout, one child per service carrying its name. */
export function createLogger(service: string, level: LevelWithSilent = 'info'): Logger {
  return pino({ name: service, level, base: { service } }, blockedStdout());
}
