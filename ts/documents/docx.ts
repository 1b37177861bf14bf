import mammoth from 'mammoth';

import type { Block } from './blocks.js';
import { withoutHiddenText } from './docx-hidden.js';
import { DocumentError } from './errors.js';
import { htmlBlocks } from './html.js';

/**
 * A DOCX in reading order. mammoth maps Word's paragraph styles to HTML (Heading 1 → h1, list
 * paragraphs → li), which `htmlBlocks` then reads; hidden text is cut first (`docx-hidden.ts`).
 * A ZIP that is not a readable Word document is corrupt.
 */
export async function docxBlocks(bytes: Uint8Array): Promise<Block[]> {
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(await withoutHiddenText(bytes)) }));
  } catch (err) {
    // The reader's own message names its XML parser's internals; say what is wrong in the file.
    const zip = err instanceof Error && /zip|central directory/i.test(err.message);
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      zip
        ? 'not a readable DOCX: the ZIP container is truncated or damaged'
        : 'not a readable DOCX: its XML does not parse',
    );
  }
  return htmlBlocks(html);
}
