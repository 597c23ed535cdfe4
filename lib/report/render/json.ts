import { jsonChunks, jsonText } from '../../json-text.js';
import type { ReportDocument } from '../document.js';

/** `report --json`: the document itself, version 1 (schema/report.v1.schema.json); any tree depth (R4-4). */
export function renderReportJson(doc: ReportDocument): string {
  return jsonText(doc, { indent: 2 })!;
}

/** renderReportJson's text in pieces: a document of 500,000 groups is longer than any one string (R4-12). */
export function renderReportJsonChunks(doc: ReportDocument): Iterable<string> {
  return jsonChunks(doc, { indent: 2 });
}
