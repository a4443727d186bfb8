import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** The one logger: JSON lines on stdout, one child per service carrying its name. */
export function createLogger(service: string, level: LevelWithSilent = 'info'): Logger {
  return pino({ name: service, level, base: { service } });
}
