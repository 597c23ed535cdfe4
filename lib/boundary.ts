/**
 * Issue 58 #11: whether Ctrl-C (`signal`, the CLI's interrupt) asks a long command to stop at the
 * boundary it has reached: migrate's steps, the health check's slices. A turn of the event loop
 * comes first, so a SIGINT that arrived during a synchronous SQLite statement has been delivered.
 * Each command throws its own error, which says where it stopped.
 */
export async function interruptedAtBoundary(signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) return false;
  await new Promise<void>((resolve) => setImmediate(resolve));
  return signal.aborted;
}
