// npm run cli -- evidence verify <export.jsonl|export.csv> [--public-key <file>] [--checkpoints <file>]
//                                 [--filtered] [--without-trailer] [--manifests <bundle.jsonl>]
// npm run cli -- evidence public-key
// Verification needs no database and no server: exit 0 intact, 1 broken (the event named), 2 usage or I/O error.
import { createPublicKey } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import {
  describeBundle,
  describeResult,
  verifyExportStream,
  verifyManifestBundle,
  loadSigningKey,
  parseCheckpoints,
  signingKeyPath,
  TRAILERS_SINCE,
  type Checkpoint,
  type OfflineOptions,
} from '../evidence/index.ts';

export const EVIDENCE_USAGE =
  'usage: npm run cli -- evidence verify <export.jsonl|export.csv> [--public-key <key.pem>] [--checkpoints <checkpoints.json>]\n' +
  '                                     [--filtered] [--without-trailer] [--manifests <bundle.jsonl>] [--allow-unsigned]\n' +
  '       npm run cli -- evidence public-key\n' +
  'A full export is checked as the whole chain, up to its signed trailer. --filtered: an export whose trailer says it\n' +
  "was filtered, checked event by event. --public-key: the trailer and checkpoints are checked against the console's\n" +
  'key; without it the command refuses (exit 2) unless --allow-unsigned: then only the hash chain is checked, and a\n' +
  'file cut at its end with a re-made unsigned trailer passes. --without-trailer: an export made before trailers\n' +
  `(events cut from its end cannot be detected); a file holding an event recorded since ${TRAILERS_SINCE} had a\n` +
  'trailer, and fails. --checkpoints: every checkpoint must be within the export (fetch them before the export).\n' +
  '--manifests: the release manifests exported with it (GET /api/evidence/export/manifests), each checked against\n' +
  'its render hash, and every manifest the export says was kept present.\n';

interface Io {
  out(s: string): void;
  err(s: string): void;
  env?: NodeJS.ProcessEnv;
}

const stdio: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
};

export async function verifyFile(
  file: string,
  opts: OfflineOptions,
  io: Io = stdio,
  manifests?: string,
): Promise<number> {
  const r = await verifyExportStream(createReadStream(file, 'utf8') as AsyncIterable<string>, opts);
  for (const l of describeResult(r)) io.out(`${l}\n`);
  if (!manifests) return r.ok ? 0 : 1;
  const b = await verifyManifestBundle(
    createReadStream(file, 'utf8') as AsyncIterable<string>,
    createReadStream(manifests, 'utf8') as AsyncIterable<string>,
  );
  for (const l of describeBundle(b)) io.out(`${l}\n`);
  return r.ok && b.ok ? 0 : 1;
}

export async function evidenceCli(argv: string[], io: Io = stdio): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'public-key') {
    const cfg = loadConfig(io.env ?? process.env, []);
    io.out(loadSigningKey(signingKeyPath(cfg.dataDir, io.env ?? process.env)).publicKeyPem);
    return 0;
  }
  if (sub !== 'verify') {
    io.err(EVIDENCE_USAGE);
    return 2;
  }
  let file: string | undefined;
  let keyFile: string | undefined;
  let cpFile: string | undefined;
  let bundleFile: string | undefined;
  let mode: OfflineOptions['mode'] = 'full';
  let withoutTrailer = false;
  let allowUnsigned = false;
  let full = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--public-key' && rest[i + 1]) keyFile = rest[++i];
    else if (a === '--checkpoints' && rest[i + 1]) cpFile = rest[++i];
    else if (a === '--manifests' && rest[i + 1]) bundleFile = rest[++i];
    else if (a === '--full')
      full = true; // the default, kept for scripts that say so
    else if (a === '--filtered') mode = 'filtered';
    else if (a === '--without-trailer') withoutTrailer = true;
    else if (a === '--allow-unsigned') allowUnsigned = true;
    else if (a && !a.startsWith('--') && !file) file = a;
    else {
      io.err(`unexpected argument ${a}\n${EVIDENCE_USAGE}`);
      return 2;
    }
  }
  if (full && mode === 'filtered') {
    io.err(`--full and --filtered: choose one\n${EVIDENCE_USAGE}`);
    return 2;
  }
  if (!file || (cpFile && !keyFile)) {
    io.err(
      `${cpFile && !keyFile ? 'checkpoints are checked with the public key: add --public-key\n' : ''}${EVIDENCE_USAGE}`,
    );
    return 2;
  }
  // without the key the trailer's signature is not checked: whoever cut events from the end and wrote a new
  // unsigned trailer would pass. That is the operator's explicit choice (issue 40), never the default.
  if (!keyFile && !allowUnsigned) {
    io.err(
      'no --public-key: the signature of the trailer would not be checked, so a file cut at its end with a re-made\n' +
        "trailer would pass. Give the console's key (npm run cli -- evidence public-key > key.pem; --public-key\n" +
        `key.pem), or --allow-unsigned to check the hash chain only.\n${EVIDENCE_USAGE}`,
    );
    return 2;
  }
  let checkpoints: Checkpoint[] | undefined;
  let publicKey: string | undefined;
  try {
    if (keyFile) {
      publicKey = readFileSync(keyFile, 'utf8');
      if (createPublicKey(publicKey).asymmetricKeyType !== 'ed25519')
        throw new Error(`${keyFile} is not an Ed25519 public key`);
    }
    if (cpFile) checkpoints = parseCheckpoints(JSON.parse(readFileSync(cpFile, 'utf8')));
    return await verifyFile(
      file,
      {
        mode,
        ...(withoutTrailer ? { withoutTrailer } : {}),
        ...(checkpoints ? { checkpoints } : {}),
        ...(publicKey ? { publicKey } : {}),
      },
      io,
      bundleFile,
    );
  } catch (e) {
    io.err(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}
