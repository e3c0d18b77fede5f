import winston from 'winston';

/**
 * JSON logs on stderr for every long-running process. Level from PLUGFLOW_LOG_LEVEL (default
 * info). `component` is stamped on every line so that interleaved logs of dev mode stay readable.
 */
export type Logger = winston.Logger;

export function createLogger(component: string, level = process.env.PLUGFLOW_LOG_LEVEL ?? 'info'): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: false }), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] })],
  });
}
