// IP addresses as the URL policy (./url-policy.ts) sees them: every textual form a URL or a resolver may give
// (dotted quad, the decimal/octal/hex forms URL parsers accept, IPv6 with an embedded IPv4 address) reduced to
// bytes, IPv4 addresses carried inside IPv6 ones taken out, and the kind of network each address is on.
import { isIPv4, isIPv6 } from 'node:net';

export interface Ip {
  v: 4 | 6;
  /** 4 or 16 bytes */
  bytes: number[];
}

/** What the policy cares about: only `public` is fetched without an allow-list entry; `metadata` never. */
export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'metadata' | 'reserved';

export const ADDRESS_KIND_WORDS: Record<AddressKind, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  unspecified: 'an unspecified address',
  metadata: 'a cloud metadata address',
  reserved: 'a reserved or multicast address',
};

function v4FromNumber(n: number): Ip {
  return { v: 4, bytes: [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255] };
}

/**
 * A host as WHATWG URL parsers read IPv4 (and as inet_aton does): one to four parts, each decimal, octal
 * (leading 0) or hex (0x), the last filling the remaining bytes: `2852039166`, `0xa9.0xfe.0xa9.0xfe`,
 * `0251.0376.0251.0376` are all 169.254.169.254. `undefined` when the host is a name; `'invalid'` when it looks
 * numeric but is no address (a part too big, or a name whose last label is a number).
 */
export function parseIPv4Forms(host: string): Ip | 'invalid' | undefined {
  const parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) {
    return /^(0x[0-9a-f]*|[0-9]+)$/i.test(parts[parts.length - 1] ?? '') ? 'invalid' : undefined;
  }
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else n = NaN;
    nums.push(n);
  }
  if (nums.some((n) => Number.isNaN(n))) {
    // a host whose last label is a number is an IPv4 address or nothing, as URL parsers read it
    return /^(0x[0-9a-f]*|[0-9]+)$/i.test(parts[parts.length - 1]!) ? 'invalid' : undefined;
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return 'invalid';
  let value = last;
  nums.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return v4FromNumber(value);
}

function parseIPv6(text: string): Ip | undefined {
  const s = text.replace(/%.*$/, ''); // a zone (fe80::1%eth0) does not change the kind
  if (!isIPv6(s)) return undefined;
  let head = s;
  const tail: number[] = [];
  const v4 = /:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const ip = v4[1]!.split('.').map(Number);
    tail.push((ip[0]! << 8) | ip[1]!, (ip[2]! << 8) | ip[3]!);
    head = s.slice(0, v4.index + 1); // keeps the `::` of `::a.b.c.d`, else one `:` to drop
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left = '', right] = head.split('::');
  const words = (t: string) => (t ? t.split(':').map((w) => parseInt(w, 16)) : []);
  const l = words(left);
  const r = right === undefined ? [] : words(right);
  const fill = 8 - tail.length - l.length - r.length;
  const all = right === undefined ? [...l, ...tail] : [...l, ...Array<number>(fill).fill(0), ...r, ...tail];
  if (all.length !== 8) return undefined;
  return { v: 6, bytes: all.flatMap((w) => [(w >> 8) & 255, w & 255]) };
}

/** A literal address (dotted-quad IPv4 or IPv6, brackets allowed), as resolvers and allow-lists write them. */
export function parseIp(text: string): Ip | undefined {
  const s = text.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(s)) return { v: 4, bytes: s.split('.').map(Number) };
  return parseIPv6(s);
}

const zeros = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 one carries to an IPv4 host, if any: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::). Every other address as it is.
 */
export function unmap(ip: Ip): Ip {
  if (ip.v === 4) return ip;
  const b = ip.bytes;
  const last4 = { v: 4 as const, bytes: b.slice(12) };
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return last4;
  if (zeros(b, 0, 12) && !zeros(b, 12, 14)) return last4; // ::a.b.c.d, but not :: or ::1
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return last4;
  if (b[0] === 0x20 && b[1] === 0x02) return { v: 4, bytes: b.slice(2, 6) };
  return ip;
}

export function formatIp(ip: Ip): string {
  if (ip.v === 4) return ip.bytes.join('.');
  const w = Array.from({ length: 8 }, (_, i) => (ip.bytes[2 * i]! << 8) | ip.bytes[2 * i + 1]!);
  // RFC 5952: the longest run of two or more zero words becomes ::
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (w[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (a: number[]) => a.map((x) => x.toString(16)).join(':');
  return best < 0 ? hex(w) : `${hex(w.slice(0, best))}::${hex(w.slice(best + bestLen))}`;
}

export interface Cidr {
  ip: Ip;
  bits: number;
}

export function parseCidr(text: string): Cidr | undefined {
  const m = /^(.+)\/(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const ip = parseIp(m[1]!);
  const bits = Number(m[2]);
  if (!ip || bits > ip.bytes.length * 8) return undefined;
  // an IPv4-mapped range is the IPv4 range it maps
  if (ip.v === 6 && unmap(ip).v === 4 && bits >= 96 && zeros(ip.bytes, 0, 10))
    return { ip: unmap(ip), bits: bits - 96 };
  return { ip, bits };
}

/** Whether `ip` (IPv4 carried in IPv6 taken out) lies in `cidr`. */
export function inCidr(ip: Ip, cidr: Cidr): boolean {
  const a = unmap(ip);
  if (a.v !== cidr.ip.v) return false;
  for (let bit = 0; bit < cidr.bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((a.bytes[byte]! & mask) !== (cidr.ip.bytes[byte]! & mask)) return false;
  }
  return true;
}

const RANGES: Array<[string, AddressKind]> = [
  // cloud metadata services: AWS/GCP/Azure/OpenStack, ECS task roles, EKS pod identity, Alibaba, Oracle, AWS IPv6
  ['169.254.169.254/32', 'metadata'],
  ['169.254.170.2/32', 'metadata'],
  ['169.254.170.23/32', 'metadata'],
  ['100.100.100.200/32', 'metadata'],
  ['192.0.0.192/32', 'metadata'],
  ['fd00:ec2::254/128', 'metadata'],
  ['fd00:ec2::23/128', 'metadata'],
  ['0.0.0.0/8', 'unspecified'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['100.64.0.0/10', 'private'], // carrier-grade NAT
  ['169.254.0.0/16', 'link-local'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'reserved'], // multicast
  ['240.0.0.0/4', 'reserved'], // and the broadcast address
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // site-local (deprecated)
  ['fc00::/7', 'private'], // unique local
  ['64:ff9b:1::/48', 'private'], // local-use NAT64
  ['100::/64', 'reserved'],
  ['2001:db8::/32', 'reserved'],
  ['ff00::/8', 'reserved'],
];
const PARSED_RANGES = RANGES.map(([c, kind]) => ({ cidr: parseCidr(c)!, kind }));

/** The kind of network an address is on, judged on the IPv4 address it carries when it carries one. */
export function addressKind(ip: Ip): AddressKind {
  const a = unmap(ip);
  return PARSED_RANGES.find((r) => inCidr(a, r.cidr))?.kind ?? 'public';
}
