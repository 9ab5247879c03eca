import { deflateSync } from 'node:zlib';

/** One page of a generated PDF: lines of text (a real text layer), or an RGB image (no text layer). */
export type PdfPage =
  | { lines: readonly string[] }
  | { image: { width: number; height: number; rgb: Buffer } };

export interface PdfDocumentSpec {
  title?: string;
  author?: string;
  /** ISO date-time, written as the PDF CreationDate. */
  createdAt?: string;
  pages: readonly PdfPage[];
}

/**
 * A minimal PDF 1.4 writer for demo and test fixtures (no dependency, offline): A4 pages, Helvetica text
 * with a text layer that pdftotext reads, or one full-page image (Flate-compressed RGB) with no text, the
 * case the documents digest renders and OCRs. Text is Latin-1 only (escaped for PDF strings).
 */
export function writePdf(spec: PdfDocumentSpec): Buffer {
  const objects: (string | Buffer)[] = [];
  const add = (body: string | Buffer): number => {
    objects.push(body);
    return objects.length;
  };
  const catalog = add('');
  const pagesId = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const pageIds: number[] = [];
  for (const page of spec.pages) {
    let content: string;
    let resources: string;
    if ('lines' in page) {
      const body = page.lines
        .map((line, i) => `BT /F1 14 Tf 56 ${780 - i * 22} Td (${escapePdf(line)}) Tj ET`)
        .join('\n');
      content = body;
      resources = `<< /Font << /F1 ${font} 0 R >> >>`;
    } else {
      const { width, height, rgb } = page.image;
      const data = deflateSync(rgb);
      const image = add(
        Buffer.concat([
          Buffer.from(
            `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
          ),
          data,
          Buffer.from('\nendstream'),
        ]),
      );
      const scale = Math.min(483 / width, 700 / height);
      content = `q ${(width * scale).toFixed(2)} 0 0 ${(height * scale).toFixed(2)} 56 ${(800 - height * scale).toFixed(2)} cm /Im1 Do Q`;
      resources = `<< /XObject << /Im1 ${image} 0 R >> >>`;
    }
    const stream = add(
      `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    );
    pageIds.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 595 842] /Resources ${resources} /Contents ${stream} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R >>`;
  objects[pagesId - 1] =
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`;
  const info: string[] = [];
  if (spec.title) info.push(`/Title (${escapePdf(spec.title)})`);
  if (spec.author) info.push(`/Author (${escapePdf(spec.author)})`);
  if (spec.createdAt) info.push(`/CreationDate (${pdfDate(spec.createdAt)})`);
  const infoId = add(`<< ${info.join(' ')} >>`);

  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = chunks[0]!.length;
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(offset);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    chunks.push(chunk);
    offset += chunk.length;
  }
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `),
    'trailer',
    `<< /Size ${objects.length + 1} /Root ${catalog} 0 R /Info ${infoId} 0 R >>`,
    'startxref',
    String(offset),
    '%%EOF',
    '',
  ].join('\n');
  chunks.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(chunks);
}

function escapePdf(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\xff]/g, '?');
}

/** "2024-06-03T10:15:00Z" -> "D:20240603101500Z". */
function pdfDate(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(iso);
  if (!m) return 'D:19700101000000Z';
  return `D:${m[1]}${m[2]}${m[3]}${m[4] ?? '00'}${m[5] ?? '00'}${m[6] ?? '00'}Z`;
}
