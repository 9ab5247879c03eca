import type pg from 'pg';
import { quoteLiteral } from './postgres-transaction-sql.ts';
import { asResults, type Lead } from './postgres-unit-of-work.ts';

/** Microtask hops a pipeline waits for more statements before it sends (async call chains differ in depth). */
const HOPS = 8;
/** A statement joins a pipeline with at most this many values (array elements counted)... */
const MAX_JOIN_ELEMENTS = 2048;
/** ...and this many characters of strings. */
const MAX_JOIN_CHARS = 65_536;

interface Item {
  name: string;
  text: string;
  values: readonly unknown[];
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Statements issued together on one connection inside a transaction (reads a caller starts with
 * Promise.all), sent as ONE simple query: `EXECUTE name(literals); EXECUTE ...`. Node's pg client runs a
 * connection's statements one round trip each; the server runs a simple query's statements in order, in the
 * same transaction, with the plans the connection prepared for the named statements (so only statements
 * already prepared on the connection, whose values all have a literal form, join). Results are parsed by the
 * same type parsers (text format either way). A failing statement fails every statement of its query: in a
 * transaction the first failure aborts it anyway.
 *
 * Order: a statement that does not join (a text, a statement not yet prepared) first sends what waits, so
 * the connection runs everything in the order it was issued.
 */
export class StatementPipeline {
  private waiting: Item[] = [];
  /** Statements that go in front of the next batch (a unit's BEGIN and queued statements). */
  private lead: Lead | undefined;

  constructor(
    /** The connection's own query (named statements and texts), below the session's wrappers. */
    private readonly query: (config: unknown) => Promise<unknown>,
  ) {}

  /** Whether a statement with these values can join (else the caller sends it as usual, after flush()). */
  static joins(values: readonly unknown[]): boolean {
    // Small statements only (an add's): an ingest batch's arrays hold tens of thousands of elements, whose
    // literals cost more Node CPU (building and collecting the text) than the round trip they save; the
    // driver's own encoding sends them. Checked before any literal is built.
    let elements = 0;
    let chars = 0;
    for (const value of values) {
      const items = Array.isArray(value) ? value : [value];
      elements += items.length;
      if (elements > MAX_JOIN_ELEMENTS) return false;
      for (const item of items) {
        if (!hasLiteral(item)) return false;
        if (typeof item === 'string') chars += item.length;
      }
      if (chars > MAX_JOIN_CHARS) return false;
    }
    return true;
  }

  /**
   * Sends `lead` in front of the next batch (the caller adds a statement right after): a unit's BEGIN or
   * queued writes cost no round trip of their own when its next statement joins.
   */
  prefix(lead: Lead): void {
    const first = this.lead;
    this.lead = first
      ? {
          text: `${first.text}; ${lead.text}`,
          count: first.count + lead.count,
          settle: (results) => {
            lead.settle(results);
            first.settle(results.slice(0, results.length - lead.count));
          },
          fail: (error) => {
            first.fail(error);
            lead.fail(error);
          },
        }
      : lead;
  }

  add(name: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ name, text, values, resolve, reject });
      if (this.waiting.length === 1) hop(HOPS, () => this.flush());
    });
  }

  /** Sends what waits (one statement as itself, several as one simple query). */
  flush(): void {
    const items = this.waiting;
    const lead = this.lead;
    if (items.length === 0 && lead === undefined) return;
    this.waiting = [];
    this.lead = undefined;
    if (items.length === 1 && lead === undefined) {
      const [item] = items as [Item];
      this.query({ name: item.name, text: item.text, values: item.values }).then(
        (result) => item.resolve(result as pg.QueryResult),
        item.reject,
      );
      return;
    }
    const text = [
      ...(lead === undefined ? [] : [lead.text]),
      ...items.map(
        (item) => `EXECUTE ${item.name}(${item.values.map((value) => literalOf(value)!).join(', ')})`,
      ),
    ].join('; ');
    this.query(text).then(
      (out) => {
        const list = asResults(out);
        const first = list.length - items.length;
        lead?.settle(list.slice(0, first));
        items.forEach((item, at) => {
          item.resolve(list[first + at]!);
        });
      },
      (error: unknown) => {
        lead?.fail(error);
        for (const item of items) item.reject(error);
      },
    );
  }
}

/** Whether literalOf gives a scalar `value` a literal (arrays: each element). */
function hasLiteral(value: unknown): boolean {
  if (value === null || value === undefined || typeof value === 'boolean') return true;
  if (typeof value === 'string') return !value.includes('\u0000');
  return typeof value === 'number' && Number.isFinite(value);
}

function hop(times: number, then: () => void): void {
  if (times === 0) then();
  else queueMicrotask(() => hop(times - 1, then));
}

/**
 * A value as an SQL literal the server coerces to the parameter's type, as the text the driver would send
 * for it; undefined when it has none here (the statement is sent as usual): only strings, finite numbers,
 * booleans, null and one-dimensional arrays of those. A NUL never joins (the server refuses it in a
 * parameter, with its own error).
 */
function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.includes('\u0000') ? undefined : quoteLiteral(value);
  if (typeof value === 'number') return Number.isFinite(value) ? `'${String(value)}'` : undefined;
  if (typeof value === 'boolean') return value ? "'true'" : "'false'";
  if (!Array.isArray(value)) return undefined;
  const elements: string[] = [];
  for (const element of value) {
    if (element === null || element === undefined) elements.push('NULL');
    else if (typeof element === 'string') {
      if (element.includes('\u0000')) return undefined;
      elements.push(`"${element.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    } else if (typeof element === 'number') {
      if (!Number.isFinite(element)) return undefined;
      elements.push(String(element));
    } else if (typeof element === 'boolean') elements.push(element ? 'true' : 'false');
    else return undefined;
  }
  return quoteLiteral(`{${elements.join(',')}}`);
}
