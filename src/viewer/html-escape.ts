/** Escapes text for HTML element content and double-quoted attributes (memory text is untrusted). */
export function escapeHtml(value: string | number | undefined): string {
  if (value === undefined) return '';
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Shortens long text for table cells and node labels; the full text goes into a title attribute. */
export function truncate(value: string, max: number): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(1, max - 1))}…`;
}

/** Fixed-precision numbers so the page is stable across runs. */
export function fmt(value: number, digits = 3): string {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}
