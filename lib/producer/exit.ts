/** What a producer does when its process runs out of work or exits. */
export interface ExitAware {
  /** the event loop is empty: flush what is held (async work keeps the process alive until done) */
  beforeExit(): void;
  /** the process is exiting: synchronous only; count and log what is still held */
  exit(): void;
}

const live = new Set<ExitAware>();
let installed = false;

/**
 * One pair of process listeners for all producers (not one per producer: a host or a test suite
 * that creates many would hit MaxListenersExceededWarning). `beforeExit` is emitted when the loop
 * empties, which the producer's unref()'d flush timer allows; it is not emitted on process.exit()
 * or a signal, hence the `exit` report and the SIGTERM → close() hook in docs/producers.md.
 */
export function watchExit(producer: ExitAware): () => void {
  if (!installed) {
    installed = true;
    process.on('beforeExit', () => {
      for (const p of live) guarded(() => p.beforeExit());
    });
    process.on('exit', () => {
      for (const p of live) guarded(() => p.exit());
    });
  }
  live.add(producer);
  return () => live.delete(producer);
}

/** Telemetry never breaks the host, least of all its exit. */
function guarded(fn: () => void): void {
  try {
    fn();
  } catch {
    // nothing sensible to do while the process exits
  }
}
