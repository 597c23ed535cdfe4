import type { Logger } from '@aws-lambda-powertools/logger';
import type { RecordOutcome } from './outcome.js';

/**
 * WARN for everything that did not simply land, ERROR for a system error (R2-4: the database is
 * unusable and an operator must act); never the body (it may carry prompt or result text).
 */
export function logOutcome(logger: Logger, outcome: RecordOutcome): void {
  const { record, verdict, fate, parkError } = outcome;
  const base = { message_id: record.messageId, message_group_id: record.attributes?.MessageGroupId };
  if (verdict.kind === 'invalid') {
    logger.warn(
      parkError
        ? 'invalid frame could not be parked on the dead-letter queue; it will be redelivered'
        : 'invalid frame parked on the dead-letter queue',
      {
        ...base,
        reason: verdict.reason,
        ...(parkError ? { park_error: parkError } : {}),
      },
    );
    return;
  }
  if (verdict.kind === 'skipped' || verdict.kind === 'persisted') {
    if (fate === 'redelivered') logger.debug('record redelivered behind an earlier failure in its message group', base);
    return;
  }
  const { error, write } = verdict;
  const context = {
    ...base,
    task_session_id: write.task_session_id,
    tool_call_id: write.tool_call_id,
    agent_execution_id: write.agent_execution_id,
    sqlstate: error.sqlstate,
    driver_code: error.driverCode,
    failure_kind: error.kind,
    error: error.message,
  };
  if (verdict.kind === 'retry' && error.kind === 'system') {
    logger.error(
      'database unusable (system error); the frame and the rest of its message group stay on the queue',
      context,
    );
    return;
  }
  const what = {
    retry: 'write failed transiently; the frame and the rest of its message group will be redelivered',
    orphaned: 'session no longer exists (deleted); frame acknowledged as orphaned',
    rejected: parkError
      ? 'write rejected and the frame could not be parked; it will be redelivered'
      : 'write rejected; frame parked on the dead-letter queue',
  }[verdict.kind];
  logger.warn(what, parkError ? { ...context, park_error: parkError } : context);
}
