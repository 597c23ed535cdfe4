import type { Queryable } from '../db/database.js';
import { PAGE_DEFAULTS } from '../defaults.js';
import { jsonDocumentChunks } from '../json-document.js';
import { buildReport, type ReportOptions } from '../report/build.js';
import type { Completeness, ReportDocument } from '../report/document.js';
import { renderHtml } from '../report/render/html.js';
import { CONTENT_SECURITY_POLICY } from '../report/render/style.js';
import { type ObjectWriter, PublishError, type PutRequest } from './s3.js';
import { DOCUMENT_FILE, foldersFor, PAGE_FILE, type PublishFolders, type PublishTarget, s3Url } from './target.js';

/*
 * One publish run (R5-6, docs/publish.md), the CLI's and the scheduled function's alike: one report
 * run, its JSON document and the page rendered from that document (exactly what `report --json
 * --html FILE` prints and writes), put under PREFIX/YYYY-MM-DD/HHMMSSZ/ (UTC, the run's start)
 * and then under PREFIX/latest/. The order is the guarantee: latest/ is written only once the dated
 * copy is complete, and in each folder the JSON before the page, so a reader never sees a page
 * whose JSON is missing. S3 writes one object at a time, so no order keeps latest/'s pair whole
 * through a failure between its two writes: a run that fails before latest/ leaves it as it was,
 * and one that fails between them leaves this run's JSON beside the previous page. The error says
 * which: it names what the run wrote, where (issue 57 #5, docs/publish.md#what-is-where).
 * Every run writes, changed figures or not: the page says when it was made.
 */

export const CONTENT_TYPES = Object.freeze({
  json: 'application/json',
  html: 'text/html; charset=utf-8',
});

/** The dated copies' tag: the bucket's lifecycle rule expires objects that carry it (infra/publish.yml). */
export const DATED_TAG = 'kind=dated';

/** The page's CSP travels as user metadata (S3 serves x-amz-meta-content-security-policy); one definition: style.ts. */
export const CSP_METADATA = Object.freeze({ 'content-security-policy': CONTENT_SECURITY_POLICY });

/** What `report --html FILE` builds with no other flag: the page's data and its default trees. */
const PAGE_REPORT: ReportOptions = { trees: PAGE_DEFAULTS.trees, pageData: true };

export interface PublishOptions {
  /** messages newer than this are not yet expected to have rows (the report's shortfall cutoff) */
  graceSeconds?: number;
  /** the run's start (the dated folder, the document's generated_at); default now */
  startedAt?: Date;
}

export interface PublishedObject {
  key: string;
  bytes: number;
  content_type: string;
}

export interface PublishSummary {
  bucket: string;
  prefix: string;
  /** the run's start: the document's generated_at and the dated folder's instant */
  generated_at: string;
  /** the dated folder and latest/, with their trailing slash */
  dated: string;
  latest: string;
  /** in the order written */
  objects: PublishedObject[];
  /** the report's completeness in one line (the document's `completeness` has it all) */
  completeness: string;
}

/** The report's completeness in one line, for the CLI and the function's log. */
export function completenessLine(c: Completeness): string {
  const shortfall = !c.shortfall.checked
    ? 'shortfall not checked'
    : c.shortfall.open
      ? `shortfall OPEN: ${c.shortfall.count} message key(s) without a row`
      : 'shortfall none';
  const unreadable = Object.values(c.unreadable).reduce((sum, n) => sum + n, 0);
  return [
    shortfall,
    `verified through ${c.verified_through ?? 'never (the scheduled health check has not run)'}`,
    `capture since ${c.capture_since ?? 'never (not activated)'}`,
    `${unreadable} unreadable value(s)`,
    // issue 58: the unpriced events make every cost that leaves one out a lower bound (R5-1)
    c.unpriced_events === null
      ? 'unpriced cost events not known (no cost_source in the ledger, or no ledger)'
      : c.unpriced_events === 0
        ? 'no unpriced cost event'
        : `${c.unpriced_events} unpriced cost event(s): every cost that leaves one out is a lower bound`,
    ...(c.lower_bound_sessions > 0 ? [`${c.lower_bound_sessions} session(s) a lower bound`] : []),
    `${c.notes.length} note(s)`,
  ].join('; ');
}

/**
 * What a failed run left, for its error (issue 57 #5): the writes go dated JSON, dated page,
 * latest/ JSON, latest/ page, so the count of those done says it all.
 */
export function writtenSoFar(bucket: string, folders: PublishFolders, done: number): string {
  const dated = s3Url(bucket, folders.dated);
  const latest = s3Url(bucket, folders.latest);
  switch (done) {
    case 0:
      return `Nothing was written; ${latest} is as it was`;
    case 1:
      return `Written: ${dated}${DOCUMENT_FILE} only (its page was not); ${latest} is as it was`;
    case 2:
      return `Written: the complete dated copy ${dated} (${DOCUMENT_FILE}, ${PAGE_FILE}); ${latest} is as it was`;
    default:
      return `Written: the complete dated copy ${dated} (${DOCUMENT_FILE}, ${PAGE_FILE}) and ${latest}${DOCUMENT_FILE}; ${latest}${PAGE_FILE} is still the previous run's page, beside this run's JSON, until a run succeeds`;
  }
}

/** The document as `report --json` prints it (the CLI's one serialiser), as bytes. */
function documentBytes(doc: ReportDocument): Buffer {
  return Buffer.from([...jsonDocumentChunks(doc)].join(''));
}

export async function publishReport(
  db: Queryable,
  writer: ObjectWriter,
  target: PublishTarget,
  options: PublishOptions = {},
): Promise<PublishSummary> {
  const startedAt = options.startedAt ?? new Date();
  const doc = await buildReport(db, {
    ...PAGE_REPORT,
    graceSeconds: options.graceSeconds,
    now: BigInt(startedAt.getTime()) * 1000n,
  });
  const json = documentBytes(doc);
  const page = Buffer.from(renderHtml(doc, { trees: PAGE_REPORT.trees }));
  const folders = foldersFor(target.prefix, startedAt);
  const objects: PublishedObject[] = [];
  const put = async (request: PutRequest) => {
    await writer.put(request);
    objects.push({ key: request.key, bytes: request.body.length, content_type: request.contentType });
  };
  try {
    for (const [folder, tagging] of [
      [folders.dated, DATED_TAG],
      [folders.latest, undefined],
    ] as const) {
      // sequential on purpose: the JSON before the page, the dated pair before latest/
      await put({
        key: `${folder}${DOCUMENT_FILE}`,
        body: json,
        contentType: CONTENT_TYPES.json,
        metadata: CSP_METADATA,
        tagging,
      });
      await put({
        key: `${folder}${PAGE_FILE}`,
        body: page,
        contentType: CONTENT_TYPES.html,
        metadata: CSP_METADATA,
        tagging,
      });
    }
  } catch (err) {
    if (!(err instanceof PublishError)) throw err;
    throw new PublishError(`${err.message}. ${writtenSoFar(target.bucket, folders, objects.length)}`, {
      cause: err.cause,
    });
  }
  return {
    bucket: target.bucket,
    prefix: target.prefix,
    generated_at: doc.generated_at,
    dated: folders.dated,
    latest: folders.latest,
    objects,
    completeness: completenessLine(doc.completeness),
  };
}
