/**
 * Email headers an importer keeps in `MemoryRecord.metadata.email` (kind 'email'). The `same_record`
 * relation reads them; every field is optional because real mail is messy.
 */
export interface EmailMetadata {
  /** Message-ID header, with or without angle brackets. */
  messageId?: string;
  /** In-Reply-To header (one Message-ID). */
  inReplyTo?: string;
  /** References header, split into Message-IDs. */
  references?: string[];
  subject?: string;
  from?: string;
  to?: string[];
}
