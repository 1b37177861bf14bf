/** Why a document could not be read: `DOCUMENT_CORRUPT` (truncated, malformed) or
 * `DOCUMENT_NOT_READABLE` (well formed, but no text to be had: encrypted, scanned). */
export class DocumentError extends Error {
  override readonly name = 'DocumentError';

  constructor(
    readonly code: 'DOCUMENT_CORRUPT' | 'DOCUMENT_NOT_READABLE',
    message: string,
  ) {
    super(message);
  }
}
