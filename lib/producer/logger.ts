/**
 * What the producer needs of a logger (R4-11): one method, `warn(message, fields)`. A Powertools
 * `Logger` and `console` fit as they are (pino takes its arguments the other way round: wrap it);
 * the producer's public types name no logging library, so a host's TypeScript compiles against
 * them without that library's types.
 */
export interface ProducerLogger {
  warn(message: string, fields: Record<string, unknown>): void;
}

/**
 * The default: one JSON line per WARN on stderr (docs/producers.md, "Bounded memory, time and
 * logs"). The fields are counts, reasons, error codes and the endpoint's host:port, never a
 * frame's text or a credential, so nothing here needs redacting.
 */
export const stderrLogger: ProducerLogger = {
  warn(message, fields) {
    process.stderr.write(
      `${JSON.stringify({ level: 'WARN', message, service: 'subagent-context-producer', timestamp: new Date().toISOString(), ...fields })}\n`,
    );
  },
};
