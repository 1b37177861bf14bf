import { type PlacedBlock, place } from './blocks.js';
import type { DocType } from './sniff.js';
import { textBlocks } from './text.js';

/** A document's text in reading order and its blocks. */
export interface Extracted {
  type: DocType;
  text: string;
  blocks: PlacedBlock[];
}

/**
 * Extracts `bytes` of a type `sniff` named; throws a `DocumentError` when it cannot be read. The
 * PDF, DOCX and HTML readers (pdf.js, mammoth, htmlparser2) load on first use: loaded with the node
 * they cut HTTP recall throughput in the node bench by about 40% (3,379 against 5,474 requests/s at
 * 20k facts), for reasons not pinned down, so only a node that is sent documents loads them.
 */
export async function extract(bytes: Uint8Array, type: DocType): Promise<Extracted> {
  const blocks =
    type === 'pdf'
      ? await (await import('./pdf.js')).pdfBlocks(bytes)
      : type === 'docx'
        ? await (await import('./docx.js')).docxBlocks(bytes)
        : type === 'html'
          ? (await import('./html.js')).htmlBlocks(new TextDecoder('utf-8').decode(bytes))
          : textBlocks(bytes);
  return { type, ...place(blocks) };
}
