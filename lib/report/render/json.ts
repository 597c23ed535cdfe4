import { jsonText } from '../../json-text.js';
import type { ReportDocument } from '../document.js';

/** `report --json`: the document itself, version 1 (schema/report.v1.schema.json); any tree depth (R4-4). */
export function renderReportJson(doc: ReportDocument): string {
  return jsonText(doc, { indent: 2 })!;
}
