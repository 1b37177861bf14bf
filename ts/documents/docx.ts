import JSZip from 'jszip';
import mammoth from 'mammoth';

import type { Block } from './blocks.js';
import { withoutHiddenText } from './docx-hidden.js';
import { DocumentError } from './errors.js';
import { htmlBlocks } from './html.js';

/** What the parts of a DOCX unpack to by their own account, images and other media left out (they
 * are never unpacked here). JSZip keeps each entry's size from the ZIP's directory on `_data`
 * (not in its types). */
function xmlBytes(zip: JSZip): number {
  let total = 0;
  for (const f of Object.values(zip.files)) {
    if (!/\.(xml|rels)$/i.test(f.name)) continue;
    total += (f as unknown as { _data?: { uncompressedSize?: number } })._data?.uncompressedSize ?? 0;
  }
  return total;
}

/**
 * Word's paragraph styles for code, by the names Word (`HTML Preformatted`, `Macro Text`), pandoc
 * (`Source Code`) and templates (`Code`, `Code Block`) give them: a run of such paragraphs is one
 * `<pre>`, a line each, so it keeps its lines as code does in HTML (`htmlBlocks`).
 */
const CODE_STYLES = ['Code', 'Code Block', 'Source Code', 'HTML Preformatted', 'Macro Text'].map(
  (name) => `p[style-name='${name}'] => pre:separator('\\n')`,
);

/** mammoth's link back from a footnote, endnote or comment to where it is referenced: an arrow. */
const BACK_LINK = /<a href="#[a-z]+-ref-[^"]*">↑<\/a>/g;

/**
 * A DOCX in reading order, read with a heap of `mb` megabytes. mammoth maps Word's paragraph
 * styles to HTML (Heading 1 → h1, list paragraphs → li, code styles → pre: `CODE_STYLES`), which
 * `htmlBlocks` then reads; hidden text is cut first (`docx-hidden.ts`), images are not read. A ZIP that is not a readable Word
 * document is corrupt; one whose XML says it unpacks past half the heap (a ZIP bomb: 1.5 MB that
 * unpacks to 1.5 GB held a reader 12 s before its heap ran out) is refused before it is unpacked.
 */
export async function docxBlocks(bytes: Uint8Array, mb: number): Promise<Block[]> {
  let html: string;
  try {
    const unpacked = xmlBytes(await JSZip.loadAsync(bytes));
    if (unpacked > (mb / 2) * 1024 * 1024) {
      throw new DocumentError(
        'DOCUMENT_NOT_READABLE',
        `its XML unpacks to ${Math.ceil(unpacked / 1024 / 1024)} MB, more than half the reader’s ${mb} MB of memory (CAIRN_DOCUMENT_READ_MB)`,
      );
    }
    ({ value: html } = await mammoth.convertToHtml(
      { buffer: Buffer.from(await withoutHiddenText(bytes)) },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })), styleMap: CODE_STYLES },
    ));
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    // The reader's own message names its XML parser's internals; say what is wrong in the file.
    const zip = err instanceof Error && /zip|central directory/i.test(err.message);
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      zip
        ? 'not a readable DOCX: the ZIP container is truncated or damaged'
        : 'not a readable DOCX: its XML does not parse',
    );
  }
  return htmlBlocks(html.replace(BACK_LINK, ''));
}
