// CSV for evidence exports: RFC 4180 cells that a spreadsheet shows as text, and a streaming parser that gives
// the verifier back exactly what was exported.
//
// Formula injection (OWASP "CSV Injection"): a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
// return is prefixed with a single quote, so a spreadsheet shows it as text instead of running it (an actor is
// a field-manager name anyone who edits an object chooses). A cell that starts with a single quote gets one
// too, so undoing it is exact: the verifier removes one leading `'` from every cell that starts with one.
// An empty string is written quoted (`""`), null as nothing, so the two stay apart.

/** the characters a spreadsheet may read as the start of a formula (OWASP), and the quote itself */
const NEUTRALISE = /^[=+\-@\t\r']/;

export function neutralise(s: string): string {
  return NEUTRALISE.test(s) ? `'${s}` : s;
}

/** A cell the export would have neutralised but that has no quote in front: not as exported, unsafe to open. */
export const unneutralised = (s: string): boolean => NEUTRALISE.test(s) && !s.startsWith("'");

/** The exact inverse of neutralise(): one leading `'` removed. */
export function unneutralise(s: string): string {
  return s.startsWith("'") ? s.slice(1) : s;
}

/** One cell: neutralised, then quoted (doubling its quotes) when it has a comma, quote, CR or LF, or is empty. */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = neutralise(String(v));
  return s === '' || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export interface CsvCell {
  value: string;
  /** written in double quotes (an empty quoted cell is an empty string, an empty bare one null) */
  quoted: boolean;
}

export interface CsvRecord {
  cells: CsvCell[];
  /** the line of the file where the record starts (1-based) */
  line: number;
  /** set when the record could not be read (it is then not used) */
  error?: string;
}

/** a record this long is not an evidence event: an unclosed quote swallowing the file */
const MAX_RECORD_CHARS = 16 * 1024 * 1024;

/**
 * Streaming RFC 4180: push() text in any chunks, get the complete records; end() gives the last one. Records end
 * at CRLF or LF outside quotes; inside quotes every character is kept as is.
 */
export class CsvParser {
  private cells: CsvCell[] = [];
  private cell = '';
  private quoted = false;
  /** inside a quoted cell */
  private inQuotes = false;
  /** just saw a quote inside a quoted cell: the end of the cell, or the first of a doubled quote */
  private quoteSeen = false;
  /** a CR outside quotes: the start of a CRLF, or part of the cell */
  private pendingCr = false;
  private started = false;
  private line = 1;
  private recordLine = 1;
  private size = 0;
  private error: string | undefined;

  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    for (let i = 0; i < text.length; i++) {
      const ch = text[i] as string;
      this.started = true;
      if (++this.size > MAX_RECORD_CHARS && !this.error)
        this.error = `a record longer than ${MAX_RECORD_CHARS} characters (an unclosed quote?)`;
      if (this.inQuotes) {
        if (!this.quoteSeen) {
          if (ch === '"') this.quoteSeen = true;
          else {
            if (ch === '\n') this.line++;
            this.add(ch);
          }
          continue;
        }
        this.quoteSeen = false;
        if (ch === '"') {
          this.add('"'); // a doubled quote
          continue;
        }
        this.inQuotes = false; // that was the closing quote: this character comes after the cell
      }
      if (this.pendingCr) {
        this.pendingCr = false;
        if (ch !== '\n') this.bare('\r'); // a CR not followed by LF is part of the cell
      }
      if (ch === ',') this.endCell();
      else if (ch === '\n') {
        this.line++;
        out.push(this.endRecord());
      } else if (ch === '\r') this.pendingCr = true;
      else if (ch === '"' && this.cell === '' && !this.quoted) {
        this.quoted = true;
        this.inQuotes = true;
      } else this.bare(ch);
    }
    return out;
  }

  /** a character outside quotes: part of a bare cell, or an error after a quoted one */
  private bare(ch: string): void {
    if (this.quoted) this.error ??= `text after a closing quote on line ${this.line}`;
    else this.add(ch);
  }

  /** the last record, when the text does not end with a line break */
  end(): CsvRecord[] {
    if (this.inQuotes && !this.quoteSeen) {
      this.error ??= 'a quoted cell is not closed at the end of the file';
    }
    this.inQuotes = false;
    this.quoteSeen = false;
    if (!this.started) return [];
    if (this.pendingCr) this.bare('\r');
    this.pendingCr = false;
    return [this.endRecord()];
  }

  private add(ch: string): void {
    if (!this.error) this.cell += ch;
  }

  private endCell(): void {
    this.cells.push({ value: this.cell, quoted: this.quoted });
    this.cell = '';
    this.quoted = false;
  }

  private endRecord(): CsvRecord {
    this.endCell();
    const r: CsvRecord = { cells: this.cells, line: this.recordLine, ...(this.error ? { error: this.error } : {}) };
    this.cells = [];
    this.started = false;
    this.recordLine = this.line;
    this.size = 0;
    this.error = undefined;
    return r;
  }
}
