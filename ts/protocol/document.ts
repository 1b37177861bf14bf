import { z } from 'zod';

import { IsoDate, identityFields, text } from './fields.js';

/** The most bytes a document may have once decoded (DESIGN.md §2). */
export const DOCUMENT_MAX_BYTES = 5_000_000;

/** Base64 as people paste it: line breaks and spaces dropped, URL-safe letters made standard,
 * missing padding added. What is left must be standard base64. */
export function normalBase64(s: string): string {
  const plain = s.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  return plain.includes('=') ? plain : plain.padEnd(plain.length + ((4 - (plain.length % 4)) % 4), '=');
}

/** memory_document: a file as base64; its type is read from its leading bytes, never `name`. */
export const DocumentInput = z.strictObject({
  ...identityFields,
  content_base64: z
    .string()
    .min(1)
    // 5,000,000 bytes are 6,666,668 base64 characters; line breaks add a few percent.
    .max(Math.ceil((DOCUMENT_MAX_BYTES / 3) * 4 * 1.05), 'more than 5,000,000 bytes once decoded')
    .refine((s) => {
      const b = normalBase64(s);
      return /^[A-Za-z0-9+/]*={0,2}$/.test(b) && b.length % 4 === 0;
    }, 'base64 (standard or URL-safe; line breaks and missing padding are fine): A–Z, a–z, 0–9, + or -, / or _')
    .describe(
      'The file’s bytes, base64 (standard or URL-safe; line breaks and missing padding are fine): PDF, DOCX, ' +
        'HTML or UTF-8 text, at most 5,000,000 bytes decoded, its extracted text at most 1 MiB',
    ),
  name: text(1024).describe('The file’s name, shown as the source in citations unless `source` is given'),
  source: text(1024).optional().describe('A label for citations (default: `name`)'),
  date: IsoDate.optional().describe('When the document was written or true (ISO 8601)'),
});
