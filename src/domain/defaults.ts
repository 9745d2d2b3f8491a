/**
 * What the apiserver does to an object that a diff must know without asking
 * it (when the server-side dry-run is unavailable): the defaults of merge-key
 * fields, which decide which list item a Git item is, and the canonical form
 * of resource quantities. Every other default needs no table: in the
 * normalized comparison a field Git does not set is defaulted (field-diff.ts).
 */

/**
 * Defaults of merge-key fields, by the name of the list they key: a
 * container's and a Service's port `protocol` is TCP (core/v1 ContainerPort,
 * ServicePort), and Server-Side Apply keys the item with it filled in
 * (`k:{"containerPort":8080,"protocol":"TCP"}` for Git's `containerPort: 8080`).
 */
export const MERGE_KEY_DEFAULTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = Object.freeze({
  ports: Object.freeze({ protocol: 'TCP' }),
});

/** The value of merge key `key` of an item of list `list`: its own, else the apiserver's default, else undefined. */
export function mergeKeyValue(list: string, item: Readonly<Record<string, unknown>>, key: string): unknown {
  const own = item[key];
  if (own !== undefined) return own;
  return Object.hasOwn(MERGE_KEY_DEFAULTS, list) ? MERGE_KEY_DEFAULTS[list]?.[key] : undefined;
}

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;
const SUFFIX: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** A resource quantity (`500m`, `0.5`, `1Gi`, `1e3`, or a YAML number) as a number, or undefined. */
export function quantityValue(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  return Number(m[1]) * (m[2] ? (SUFFIX[m[2]] ?? 1) : 1);
}

/**
 * Whether two resource quantities are the same amount, as the apiserver's
 * canonical form makes them: Git's `cpu: 1` or `"1000m"` is live `"1"`,
 * `"0.5"` is `"500m"`. Two values that are not both quantities are not equal.
 */
export function sameQuantity(a: unknown, b: unknown): boolean {
  const x = quantityValue(a);
  const y = quantityValue(b);
  if (x === undefined || y === undefined) return false;
  return x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

const QUANTITY_PATH =
  /(?:^|\.)(?:resources\.(?:requests|limits)|overhead|spec\.hard)(?:\.[A-Za-z_][A-Za-z0-9_]*|\["(?:[^"\\]|\\.)*"\])$/;

/**
 * Whether a field path is one resource quantity: container and PVC
 * `resources.requests` / `resources.limits`, pod `overhead`, ResourceQuota
 * `spec.hard` (`…resources.requests.cpu`, `…resources.limits["nvidia.com/gpu"]`).
 */
export function isQuantityPath(path: string): boolean {
  return QUANTITY_PATH.test(path);
}
