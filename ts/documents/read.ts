import type { Block } from './blocks.js';
import type { DocType } from './sniff.js';

/** The types read on a worker thread: all but plain text, whose reading is one split. */
export type ReadType = Exclude<DocType, 'text'>;

/**
 * The blocks of a PDF, DOCX or HTML file, read by a reader with a heap of `mb` megabytes; throws a
 * `DocumentError` when it cannot be read. Each reader (pdf.js, mammoth, htmlparser2) loads on first
 * use, so a worker only ever sent HTML does not load pdf.js.
 */
export async function readBlocks(bytes: Uint8Array, type: ReadType, mb: number): Promise<Block[]> {
  switch (type) {
    case 'pdf':
      return (await import('./pdf.js')).pdfBlocks(bytes, mb);
    case 'docx':
      return (await import('./docx.js')).docxBlocks(bytes, mb);
    case 'html':
      return (await import('./html.js')).htmlBlocks(new TextDecoder('utf-8').decode(bytes));
  }
}
