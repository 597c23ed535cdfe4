import type { ReportDocument } from '../document.js';

/** `report --json`: the document itself, version 1 (schema/report.v1.schema.json). */
export function renderReportJson(doc: ReportDocument): string {
  return JSON.stringify(doc, null, 2);
}
