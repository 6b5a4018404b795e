import ExcelJS from 'exceljs';
import { call, type TestEnv } from './app.js';
import { multipart } from './conversation.js';
import { runningKbJobs } from '../../src/kb/jobs.js';

/** Knowledge base test helpers: documents made in the test, uploads, waiting for the jobs. */

/** A minimal, valid one-page PDF whose text is `lines` (Helvetica, one line each). */
export function pdfBytes(lines: string[]): Buffer {
  const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = `BT /F1 12 Tf 72 720 Td ${lines.map((l) => `(${escape(l)}) Tj 0 -16 Td`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A small XLSX workbook: one sheet, a header row and `rows`. */
export async function xlsxBytes(sheet: string, header: string[], rows: string[][]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const ws = workbook.addWorksheet(sheet);
  ws.addRow(header);
  for (const row of rows) ws.addRow(row);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

export async function upload(env: TestEnv, token: string, filename: string, content: Buffer | string, type = 'application/octet-stream') {
  const { payload, headers } = multipart([{ filename, type, content }]);
  return env.app.inject({ method: 'POST', url: '/api/v1/kb-documents', payload, headers: { ...headers, authorization: `Bearer ${token}` } });
}

/** Uploads a document, waits for its ingestion and answers its final state. */
export async function ingest(env: TestEnv, token: string, filename: string, content: Buffer | string, type?: string) {
  const response = await upload(env, token, filename, content, type);
  if (response.statusCode !== 202) throw new Error(`upload answered ${response.statusCode}: ${response.body}`);
  await runningKbJobs();
  return (await call(env, 'GET', `/kb-documents/${response.json().id}`, { token })).json();
}
