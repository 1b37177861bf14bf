import mammoth from 'mammoth';

import type { Block } from './blocks.js';
import { DocumentError } from './errors.js';
import { htmlBlocks } from './html.js';

/**
 * A DOCX in reading order. mammoth maps Word's paragraph styles to HTML (Heading 1 → h1, list
 * paragraphs → li), which `htmlBlocks` then reads; a ZIP that is not a readable Word document is
 * corrupt.
 */
export async function docxBlocks(bytes: Uint8Array): Promise<Block[]> {
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) }));
  } catch (err) {
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      `not a readable DOCX: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return htmlBlocks(html);
}
