import { describe, expect, it } from 'vitest';
import { isQuantityPath, mergeKeyValue, quantityValue, sameQuantity } from './defaults.ts';

describe('mergeKeyValue', () => {
  it.each<[string, Record<string, unknown>, string, unknown]>([
    ['ports', { containerPort: 8080 }, 'protocol', 'TCP'],
    ['ports', { port: 53, protocol: 'UDP' }, 'protocol', 'UDP'],
    ['ports', { containerPort: 8080 }, 'containerPort', 8080],
    ['env', { name: 'A' }, 'protocol', undefined],
    ['constructor', {}, 'protocol', undefined],
  ])('%s item %j, key %s → %j', (list, item, key, want) => expect(mergeKeyValue(list, item, key)).toBe(want));
});

describe('quantities', () => {
  it.each<[unknown, unknown, boolean]>([
    ['500m', '0.5', true],
    ['1', 1, true],
    ['1000m', '1', true],
    ['1Gi', '1024Mi', true],
    ['1G', '1000M', true],
    ['128974848', '129e6', false],
    ['129e6', '129M', true],
    ['100m', '0.1', true],
    ['250m', '500m', false],
    ['1Gi', '1G', false],
    ['abc', 'abc', false],
    [undefined, '1', false],
  ])('%j vs %j → %s', (a, b, want) => expect(sameQuantity(a, b)).toBe(want));

  it.each<[unknown, number | undefined]>([
    ['2Ki', 2048],
    ['.5', 0.5],
    [' 3 ', 3],
    ['1.5.1', undefined],
    ['5 Mi', undefined],
    [Infinity, undefined],
  ])('quantityValue(%j) → %j', (q, want) => expect(quantityValue(q)).toBe(want));

  it.each<[string, boolean]>([
    ['spec.template.spec.containers[name=render].resources.requests.cpu', true],
    ['spec.template.spec.containers[name=render].resources.limits["nvidia.com/gpu"]', true],
    ['spec.resources.requests.storage', true],
    ['spec.hard["requests.cpu"]', true],
    ['spec.template.spec.overhead.memory', true],
    ['spec.template.spec.containers[name=render].resources.requests', false],
    ['spec.template.spec.containers[name=render].env[name=cpu].value', false],
    ['data.cpu', false],
  ])('isQuantityPath(%j) → %s', (path, want) => expect(isQuantityPath(path)).toBe(want));
});
