import { type PlacedBlock, place } from './blocks.js';
import { docxBlocks } from './docx.js';
import { htmlBlocks } from './html.js';
import { pdfBlocks } from './pdf.js';
import type { DocType } from './sniff.js';
import { textBlocks } from './text.js';

/** A document's text in reading order and its blocks. */
export interface Extracted {
  type: DocType;
  text: string;
  blocks: PlacedBlock[];
}

/** Extracts `bytes` of a type `sniff` named; throws a `DocumentError` when it cannot be read. */
export async function extract(bytes: Uint8Array, type: DocType): Promise<Extracted> {
  const blocks =
    type === 'pdf'
      ? await pdfBlocks(bytes)
      : type === 'docx'
        ? await docxBlocks(bytes)
        : type === 'html'
          ? htmlBlocks(new TextDecoder('utf-8').decode(bytes))
          : textBlocks(bytes);
  return { type, ...place(blocks) };
}
