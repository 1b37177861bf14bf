import { z } from 'zod';

import { IsoDate, identityFields, text } from './fields.js';

/** The most bytes a document may have once decoded (DESIGN.md §2). */
export const DOCUMENT_MAX_BYTES = 5_000_000;

/** memory_document: a file as base64; its type is read from its leading bytes, never `name`. */
export const DocumentInput = z.strictObject({
  ...identityFields,
  content_base64: z
    .string()
    .min(1)
    // 5,000,000 bytes are 6,666,668 base64 characters.
    .max(Math.ceil(DOCUMENT_MAX_BYTES / 3) * 4, 'more than 5,000,000 bytes once decoded')
    .refine(
      (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
      'standard base64: A–Z, a–z, 0–9, +, /, padded with = to a multiple of 4, no line breaks',
    )
    .describe('The file’s bytes, base64: PDF, DOCX, HTML or UTF-8 text, at most 5,000,000 bytes decoded'),
  name: text(1024).describe('The file’s name, shown as the source in citations unless `source` is given'),
  source: text(1024).optional().describe('A label for citations (default: `name`)'),
  date: IsoDate.optional().describe('When the document was written or true (ISO 8601)'),
});
