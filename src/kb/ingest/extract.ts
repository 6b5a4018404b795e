import { marked } from 'marked';
import type ExcelJS from 'exceljs';
import { htmlSections, textSections, type Extracted, type Section } from '../passages.js';

/**
 * Text out of an uploaded document, by its sniffed content type, through maintained parsers:
 * pdf-parse (PDF), mammoth (DOCX, through its HTML so headings survive), exceljs (XLSX: one section
 * per sheet, one line per row naming its column headers), marked (Markdown, through HTML). A parser
 * failure is the document's error.
 */
export const PDF = 'application/pdf';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const MARKDOWN = 'text/markdown';
export const TEXT = 'text/plain';
export const HTML = 'text/html';
export const INGESTIBLE = [PDF, DOCX, XLSX, MARKDOWN, TEXT] as const;

export class ExtractError extends Error {}

// The document libraries load on first use: a daemon that never ingests a document does not keep
// them in memory (docs/performance.md, "Resident memory").

async function pdfText(bytes: Buffer): Promise<Extracted> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    const result = await parser.getText();
    // pdf-parse marks page ends with "-- n of m --"; a page break is a paragraph break.
    const text = result.text.replace(/^-- \d+ of \d+ --$/gm, '\n');
    return textSections(text);
  } finally {
    await parser.destroy();
  }
}

async function docxText(bytes: Buffer): Promise<Extracted> {
  const { default: mammoth } = await import('mammoth');
  const { value } = await mammoth.convertToHtml({ buffer: bytes });
  return htmlSections(value);
}

function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === 'object') {
    if ('richText' in value) return value.richText.map((r) => r.text).join('');
    if ('text' in value) return String(value.text);
    if ('result' in value) return value.result === undefined ? '' : String(value.result);
    return '';
  }
  return String(value);
}

async function xlsxText(bytes: Buffer): Promise<Extracted> {
  const { default: excel } = await import('exceljs');
  const workbook = new excel.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  const sections: Section[] = [];
  workbook.eachSheet((sheet) => {
    let headers: string[] | null = null;
    const lines: string[] = [];
    sheet.eachRow((row) => {
      const values = (row.values as ExcelJS.CellValue[]).slice(1).map(cellText);
      if (!headers) {
        headers = values;
        return;
      }
      const parts = values.map((v, i) => (v ? (headers![i] ? `${headers![i]}: ${v}` : v) : '')).filter(Boolean);
      if (parts.length) lines.push(`${parts.join('; ')}.`);
    });
    if (!lines.length && headers) lines.push((headers as string[]).filter(Boolean).join('; '));
    sections.push({ path: [sheet.name], text: lines.join('\n\n') });
  });
  return { title: null, sections };
}

export function markdownSections(text: string): Extracted {
  return htmlSections(marked.parse(text, { async: false, gfm: true }) as string);
}

export async function extract(bytes: Buffer, contentType: string): Promise<Extracted> {
  try {
    switch (contentType) {
      case PDF: return await pdfText(bytes);
      case DOCX: return await docxText(bytes);
      case XLSX: return await xlsxText(bytes);
      case MARKDOWN: return markdownSections(bytes.toString('utf8'));
      case TEXT: return textSections(bytes.toString('utf8'));
      default: throw new ExtractError(`${contentType} cannot be ingested`);
    }
  } catch (error) {
    if (error instanceof ExtractError) throw error;
    throw new ExtractError(`The ${contentType === PDF ? 'PDF' : contentType === DOCX ? 'Word document' : contentType === XLSX ? 'spreadsheet' : 'file'} could not be read: ${(error as Error).message || 'parser error'}`);
  }
}
