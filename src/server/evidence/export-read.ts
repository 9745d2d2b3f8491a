// Reads an export file back for the offline verifier: JSONL (one event per line, the trailer last) or CSV (the
// header, one event per record, the trailer row last), told apart by the first line. Gives each event as
// stored, the trailer, or what could not be read, with the line it is on. Streaming: text in any chunks.
import { z } from 'zod';
import { EvidenceExportTrailer } from '../../api/schemas.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { CsvParser, unneutralise, unneutralised, type CsvRecord } from './export-csv.ts';
import { CSV_COLUMNS } from './export.ts';

const Line = z.object({
  seq: z.number().int().positive(),
  time: z.string(),
  // any type: an export from a newer console verifies with an older CLI
  type: z.string(),
  actor: z.string(),
  app: z.string().nullable(),
  cluster: z.string().nullable(),
  env: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  prevHash: z.string(),
  hash: z.string(),
});

export type ExportItem =
  | { kind: 'event'; e: EvidenceEvent; line: number }
  | { kind: 'trailer'; t: EvidenceExportTrailer; line: number }
  /** not an event (`seq` when one could be read), or a trailer that is not one (`trailer`) */
  | { kind: 'bad'; line: number; reason: string; seq?: number; trailer?: boolean };

const CSV_HEADER_LINE = CSV_COLUMNS.join(',');
const zodReason = (e: z.ZodError): string =>
  e.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || 'it'}: ${i.message}`)
    .join('; ');

function trailerItem(json: unknown, line: number): ExportItem {
  const t = EvidenceExportTrailer.safeParse(json);
  return t.success
    ? { kind: 'trailer', t: t.data, line }
    : { kind: 'bad', line, trailer: true, reason: `the trailer on line ${line} is malformed (${zodReason(t.error)})` };
}

function eventItem(json: unknown, line: number): ExportItem {
  const e = Line.safeParse(json);
  if (e.success) return { kind: 'event', e: e.data as EvidenceEvent, line };
  const seq = (json as { seq?: unknown } | null)?.seq;
  return {
    kind: 'bad',
    line,
    reason: `line ${line} is not an evidence event`,
    ...(typeof seq === 'number' ? { seq } : {}),
  };
}

export function jsonlItem(text: string, line: number): ExportItem {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'bad', line, reason: `line ${line} is not an evidence event` };
  }
  if (json && typeof json === 'object' && !Array.isArray(json) && 'trailer' in json) return trailerItem(json, line);
  return eventItem(json, line);
}

/** A CSV record (after the header) as an event or the trailer; each cell's neutralising quote undone. */
export function csvItem(r: CsvRecord): ExportItem {
  const line = r.line;
  if (r.error) return { kind: 'bad', line, reason: `line ${line} is not an evidence event (${r.error})` };
  const cell = (i: number) => r.cells[i];
  const value = (i: number) => unneutralise(cell(i)?.value ?? '');
  const dataAt = CSV_COLUMNS.indexOf('data');
  const json = (i: number): unknown => {
    try {
      return JSON.parse(value(i));
    } catch {
      return undefined;
    }
  };
  if (cell(0)?.value === 'trailer') return trailerItem(json(dataAt), line);
  if (r.cells.length !== CSV_COLUMNS.length)
    return {
      kind: 'bad',
      line,
      reason: `line ${line} is not an evidence event (${r.cells.length} cells, not ${CSV_COLUMNS.length})`,
    };
  const unsafe = r.cells.findIndex((c) => unneutralised(c.value));
  if (unsafe >= 0) {
    const seq = /^[1-9][0-9]*$/.test(value(0)) ? { seq: Number(value(0)) } : {};
    return {
      kind: 'bad',
      line,
      ...seq,
      reason: `line ${line}: its ${CSV_COLUMNS[unsafe] ?? `cell ${unsafe + 1}`} starts with ${JSON.stringify(r.cells[unsafe]?.value[0])} without the quote the export puts in front (not as exported, and unsafe to open in a spreadsheet)`,
    };
  }
  // a bare empty cell is null, a quoted one the empty string
  const nullable = (i: number) => (cell(i)?.quoted || cell(i)?.value ? value(i) : null);
  const seq = /^[1-9][0-9]*$/.test(value(0)) ? Number(value(0)) : value(0);
  return eventItem(
    {
      seq,
      time: value(1),
      type: value(2),
      actor: value(3),
      app: nullable(4),
      cluster: nullable(5),
      env: nullable(6),
      data: json(dataAt),
      prevHash: value(8),
      hash: value(9),
    },
    line,
  );
}

/** push() the file's text in chunks, then end(); each event, trailer or unreadable line goes to `sink`. */
export class ExportReader {
  format: 'jsonl' | 'csv' | undefined;
  private buf = '';
  private line = 0;
  private csv: CsvParser | undefined;
  private headerSeen = false;

  constructor(private readonly sink: (item: ExportItem) => void) {}

  push(chunk: string): void {
    if (!this.format) {
      this.buf += chunk;
      // the first line tells: the CSV header, or JSONL
      if (!this.buf.includes('\n') && this.buf.length < CSV_HEADER_LINE.length + 2) return;
      this.decide();
      const text = this.buf;
      this.buf = '';
      this.feed(text);
      return;
    }
    this.feed(chunk);
  }

  end(): void {
    if (!this.format) {
      this.decide();
      const text = this.buf;
      this.buf = '';
      this.feed(text);
    }
    if (this.csv) for (const r of this.csv.end()) this.record(r);
    else if (this.buf) {
      this.jsonl(this.buf);
      this.buf = '';
    }
  }

  private decide(): void {
    if (this.buf.startsWith('\uFEFF')) this.buf = this.buf.slice(1);
    const first = this.buf.split('\n', 1)[0]?.replace(/\r$/, '');
    this.format = first === CSV_HEADER_LINE ? 'csv' : 'jsonl';
    if (this.format === 'csv') this.csv = new CsvParser();
  }

  private feed(text: string): void {
    if (this.csv) {
      for (const r of this.csv.push(text)) this.record(r);
      return;
    }
    this.buf += text;
    let i: number;
    let from = 0;
    while ((i = this.buf.indexOf('\n', from)) >= 0) {
      this.jsonl(this.buf.slice(from, i));
      from = i + 1;
    }
    this.buf = this.buf.slice(from);
  }

  private jsonl(text: string): void {
    this.line++;
    const t = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (t.trim()) this.sink(jsonlItem(t, this.line));
  }

  private record(r: CsvRecord): void {
    if (!this.headerSeen) {
      this.headerSeen = true;
      return; // decide() saw it is the header
    }
    if (r.cells.length === 1 && !r.cells[0]?.quoted && !r.cells[0]?.value && !r.error) return; // a blank line
    this.sink(csvItem(r));
  }
}
