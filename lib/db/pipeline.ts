import { Client } from '@neondatabase/serverless';

/** One statement of a pipeline. */
export interface PipelinedStatement {
  sql: string;
  params?: readonly unknown[];
}

/** The driver's protocol connection (node-postgres `Connection`), the part a pipeline uses. */
interface ProtocolConnection {
  sync(): void;
}

/** node-postgres's `Query`, which encodes one statement's Parse, Bind, Describe and Execute. */
interface EncodingQuery {
  prepare(connection: ProtocolConnection): void;
}
type QueryClass = new (config: {
  text: string;
  values: unknown[];
  callback: (error: Error | null) => void;
}) => EncodingQuery;

// The Neon driver bundles node-postgres and keeps its Query class on Client (untyped there).
const Query = (Client as unknown as { Query: QueryClass }).Query;

/**
 * Several statements sent as one pipeline (the extended protocol's Parse, Bind, Describe, Execute
 * for each, one Sync at the end): the server runs them in order, as separate statements, and
 * answers once, so they cost one round trip instead of one each. Each statement sees the ones
 * before it exactly as when sent one by one; only the waiting between them is gone. After an
 * error the server skips the rest up to the Sync, so nothing after a failed statement runs.
 *
 * A node-postgres "submittable" (`client.query(pipeline)`): the client hands it the connection
 * when it is the connection's turn and routes the server's answers to its handlers; the
 * statements' values are encoded by the driver's own Query, as for any statement.
 */
export class Pipeline {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;
  #error: unknown;

  constructor(private readonly statements: readonly PipelinedStatement[]) {
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Called by the client with the connection; writes every statement and one Sync. */
  submit(connection: ProtocolConnection): null {
    const own = Object.getOwnPropertyDescriptor(connection, 'sync');
    // Query#prepare ends each statement with a Sync; the pipeline sends one, after the last.
    connection.sync = () => undefined;
    try {
      for (const { sql, params } of this.statements) {
        // A value the driver cannot encode fails its Bind before anything of it is sent: the
        // statements after it are not sent either, so an open transaction cannot commit.
        let encodeError: Error | null = null;
        new Query({
          text: sql,
          values: [...(params ?? [])],
          callback: (error) => {
            encodeError = error;
          },
        }).prepare(connection);
        if (encodeError) {
          this.#error = encodeError;
          break;
        }
      }
    } finally {
      if (own) Object.defineProperty(connection, 'sync', own);
      else delete (connection as Partial<ProtocolConnection>).sync;
    }
    connection.sync();
    return null;
  }

  // The statements return no rows that anyone reads; their answers are only counted as done.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('a pipeline sends no COPY data');
  }
  handleCopyData(): void {}

  /** An ErrorResponse (or a lost connection): the client stops routing answers to us. */
  handleError(error: unknown): void {
    this.#reject(error);
  }

  /** The Sync's answer: every statement ran, unless a value could not be encoded. */
  handleReadyForQuery(): void {
    if (this.#error) this.#reject(this.#error);
    else this.#resolve();
  }
}
