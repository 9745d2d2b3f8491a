import { describe, expect, it } from 'vitest';
import { ownersByPath } from '../../domain/managed-fields.ts';
import { compactObject, internTree } from './compact.ts';

const cm = (name: string, fields: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    managedFields: [
      {
        manager: 'kustomize-controller',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2026-12-03T02:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: fields,
      },
    ],
  },
  data: { a: name },
});
const tree = () => ({ 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
const fieldsOf = (o: { metadata: { managedFields: Array<{ fieldsV1: unknown }> } }) =>
  o.metadata.managedFields[0]?.fieldsV1;

describe('compactObject', () => {
  it('objects of one shape share one frozen fieldsV1 tree; their owners read the same', () => {
    const a = cm('a', tree());
    const b = cm('b', tree());
    const owners = ownersByPath(structuredClone(b));
    compactObject(a);
    compactObject(b);
    expect(fieldsOf(b)).toBe(fieldsOf(a));
    expect(Object.isFrozen(fieldsOf(a))).toBe(true);
    expect(Object.isFrozen((fieldsOf(a) as { 'f:data': object })['f:data'])).toBe(true);
    expect(ownersByPath(b)).toEqual(owners);
    // a change to the shared tree throws (ES modules are strict) instead of changing both objects
    expect(() => {
      (fieldsOf(a) as Record<string, unknown>)['f:spec'] = {};
    }).toThrow(TypeError);
  });

  it('a different tree is its own copy; objects without managedFields are left as they are', () => {
    const a = cm('a', tree());
    const c = cm('c', { 'f:data': { 'f:other': {} } });
    compactObject(a);
    compactObject(c);
    expect(fieldsOf(c)).not.toBe(fieldsOf(a));
    const bare = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    expect(compactObject(bare)).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(internTree(tree())).toBe(fieldsOf(a));
  });
});
