import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

import { type Block, clean } from './blocks.js';
import { DocumentError } from './errors.js';
import { documentWords, joinBroken } from './pdf-hyphens.js';
import { type Item, type Line, readingOrder } from './pdf-layout.js';
import { withoutRunningLines } from './pdf-running.js';
import { unpacksPast } from './pdf-unpack.js';

/**
 * pdf.js's data files, which it loads from disk as a PDF needs them: the CMaps of a font that names
 * a predefined one instead of embedding its own (most Chinese, Japanese and Korean PDFs: without
 * them every such line was read as nothing), and the metrics of the standard fonts.
 */
const PDFJS = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const DATA = {
  cMapUrl: `${join(PDFJS, 'cmaps')}/`,
  cMapPacked: true,
  standardFontDataUrl: `${join(PDFJS, 'standard_fonts')}/`,
};

/** A file cut short loses its last `%%EOF`; pdf.js would otherwise read what is left silently. */
function truncated(buf: Buffer): boolean {
  return buf.subarray(Math.max(0, buf.length - 1024)).indexOf('%%EOF') < 0;
}

/** A gap between lines past this many times the text size always starts a paragraph. */
const WIDE_GAP = 1.8;

/**
 * The document's usual spacing of the lines within a paragraph: the median gap between two lines
 * of a column in the same size, of the gaps under `WIDE_GAP`. `Infinity` with fewer than three,
 * too few to tell line spacing from paragraph spacing.
 */
function lineSpacing(pages: { lines: Line[] }[], bodySize: number): number {
  const gaps: number[] = [];
  for (const { lines } of pages) {
    for (const [i, l] of lines.entries()) {
      const above = lines[i - 1];
      if (above === undefined || l.fresh || Math.abs(above.size - l.size) > bodySize * 0.15) continue;
      const gap = above.y - l.y;
      if (gap > 0 && gap < WIDE_GAP * Math.max(above.size, l.size)) gaps.push(gap);
    }
  }
  gaps.sort((a, b) => a - b);
  return gaps.length < 3 ? Number.POSITIVE_INFINITY : (gaps[Math.floor(gaps.length / 2)] ?? 0);
}

/**
 * Paragraphs rebuilt from layout: a gap between lines well above the usual line spacing (`spacing`,
 * a third more; or `WIDE_GAP`), or a change of text size, starts a new block; a line set clearly
 * larger than the body text is a heading. Spacing alone, not the text size: a paragraph's lines 12
 * pt apart under paragraphs 18 pt apart at 10 pt (1.8 times the size, reportlab's body text) ran
 * every paragraph of a column together.
 */
function paragraphs(page: number, ls: Line[], bodySize: number, spacing: number, words: Set<string>): Block[] {
  const blocks: Block[] = [];
  let current: { kind: Block['kind']; parts: string[]; y: number; size: number } | null = null;
  for (const l of ls) {
    if (l.text.trim() === '') continue;
    const heading = l.size >= bodySize * 1.25;
    const gap = current === null ? 0 : current.y - l.y;
    const fresh =
      current === null ||
      l.fresh ||
      gap < 0 ||
      gap > Math.min(Math.max(current.size, l.size) * WIDE_GAP, spacing * 1.3) ||
      Math.abs(current.size - l.size) > bodySize * 0.15 ||
      heading !== (current.kind === 'heading') ||
      /^\s*([•\u2022\-*]|\d+[.)])\s/.test(l.text);
    if (fresh) {
      if (current !== null) blocks.push({ kind: current.kind, text: current.parts.join(' '), page });
      const item = /^\s*([•\u2022\-*]|\d+[.)])\s/.test(l.text);
      current = { kind: heading ? 'heading' : item ? 'list_item' : 'paragraph', parts: [], y: l.y, size: l.size };
    }
    const c = current as NonNullable<typeof current>;
    // A word hyphenated across lines is joined again.
    const last = c.parts[c.parts.length - 1];
    const joined = last === undefined ? null : joinBroken(last, l.text, words);
    if (joined !== null) c.parts[c.parts.length - 1] = joined;
    else
      c.parts.push(
        c.kind === 'list_item' && c.parts.length === 0 ? l.text.replace(/^\s*([•\u2022\-*]|\d+[.)])\s+/, '') : l.text,
      );
    c.y = l.y;
  }
  if (current !== null) blocks.push({ kind: current.kind, text: current.parts.join(' '), page });
  return blocks;
}

/** A PDF's text in reading order, page by page, read with a heap of `mb` megabytes. Encrypted or
 * text-less (scanned) PDFs are not readable, nor one whose streams unpack past half that heap
 * (`unpacksPast`); malformed or truncated ones are corrupt. */
export async function pdfBlocks(bytes: Uint8Array, mb: number): Promise<Block[]> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (truncated(buf)) throw new DocumentError('DOCUMENT_CORRUPT', 'the PDF is truncated (no %%EOF at its end)');
  // Half the heap: what pdf.js unpacks sits beside the heap, so a reader stays within twice it.
  if (unpacksPast(buf, (mb / 2) * 1024 * 1024)) {
    throw new DocumentError(
      'DOCUMENT_NOT_READABLE',
      `its compressed streams unpack to more than ${mb / 2} MB, half the reader’s memory (CAIRN_DOCUMENT_READ_MB)`,
    );
  }
  let doc: Awaited<ReturnType<typeof getDocument>['promise']>;
  try {
    doc = await getDocument({
      data: new Uint8Array(buf),
      isEvalSupported: false,
      verbosity: 0,
      stopAtErrors: true,
      ...DATA,
    }).promise;
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'PasswordException') {
      throw new DocumentError('DOCUMENT_NOT_READABLE', 'the PDF is encrypted: send a copy without a password');
    }
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      `not a readable PDF: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  try {
    const pages: { page: number; lines: Line[] }[] = [];
    const sizes: number[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const content = await (await doc.getPage(n)).getTextContent();
      const items: Item[] = [];
      for (const raw of content.items) {
        // Whitespace items (pdf.js puts one across every gap) carry no text: gaps are read from positions.
        if (!('str' in raw) || raw.str.trim() === '') continue;
        const [, , , d = 0, e = 0, f = 0] = raw.transform as number[];
        items.push({ str: raw.str, x: e, y: f, width: raw.width, size: Math.abs(d) || raw.height });
        if (raw.str.trim() !== '') sizes.push(Math.abs(d) || raw.height);
      }
      pages.push({ page: n, lines: readingOrder(items) });
    }
    if (sizes.length === 0) {
      throw new DocumentError('DOCUMENT_NOT_READABLE', 'the PDF has no text layer (a scan?): nothing to read');
    }
    sizes.sort((a, b) => a - b);
    const body = sizes[Math.floor(sizes.length / 2)] ?? 12;
    const spacing = lineSpacing(pages, body);
    const words = documentWords(pages);
    return clean(withoutRunningLines(pages).flatMap((p) => paragraphs(p.page, p.lines, body, spacing, words)));
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      `the PDF breaks while read: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    await doc.destroy();
  }
}
