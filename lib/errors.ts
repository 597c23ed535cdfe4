/**
 * Base of every error this project throws on purpose, so `instanceof SubagentContextError` tells
 * ours from a driver's or the SDK's. Each subclass sets `name` one way: a class field with its own
 * name (`override readonly name = 'MigrationError'`), which survives bundling and shows in logs.
 */
export abstract class SubagentContextError extends Error {
  abstract override readonly name: string;
}
