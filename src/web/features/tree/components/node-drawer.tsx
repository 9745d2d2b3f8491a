import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { HealthBadge } from '../../../components/badges.tsx';
import { eventsQueryOptions, objectQueryOptions } from '../api/tree-queries.ts';

export function NodeDrawer({ node, onClose }: { node: TreeNodeDto; onClose: () => void }) {
  const [tab, setTab] = useState<'yaml' | 'events' | 'managers'>('yaml');
  const obj = useQuery(objectQueryOptions(node.ref));
  const events = useQuery({ ...eventsQueryOptions(node.ref), enabled: tab === 'events' });
  return (
    <aside
      role="dialog"
      aria-label={`${node.ref.kind} ${node.ref.name}`}
      data-testid="node-drawer"
      className="fixed inset-y-0 right-0 z-20 flex w-[40rem] max-w-full flex-col border-l border-slate-200 bg-white shadow-xl"
    >
      <header className="flex items-center gap-2 border-b border-slate-200 p-3">
        <div className="min-w-0">
          <div className="truncate font-semibold">
            {node.ref.kind} {node.ref.namespace ? `${node.ref.namespace}/` : ''}
            {node.ref.name}
          </div>
          <div className="truncate text-xs text-slate-500">{node.reason}</div>
        </div>
        <HealthBadge status={node.health} />
        <button className="ml-auto rounded px-2 text-lg" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      <nav className="flex gap-1 border-b border-slate-200 px-3 text-sm">
        {(['yaml', 'events', 'managers'] as const).map((t) => (
          <button
            key={t}
            className={`px-2 py-1 ${tab === t ? 'border-b-2 border-teal-600 font-medium' : 'text-slate-500'}`}
            onClick={() => setTab(t)}
          >
            {t === 'yaml' ? 'Live YAML' : t === 'events' ? 'Events' : 'Field managers'}
          </button>
        ))}
      </nav>
      <div className="flex-1 overflow-auto p-3 text-sm">
        {tab === 'yaml' &&
          (obj.isPending ? (
            'Loading…'
          ) : obj.isError ? (
            <p className="text-red-700">{obj.error.message}</p>
          ) : (
            <pre className="whitespace-pre-wrap font-mono text-xs" data-testid="live-yaml">
              {obj.data.yaml}
            </pre>
          ))}
        {tab === 'events' &&
          (events.isPending ? (
            'Loading…'
          ) : events.isError ? (
            <p className="text-red-700">{events.error.message}</p>
          ) : events.data.events.length === 0 ? (
            <p className="text-slate-500">No recent events.</p>
          ) : (
            <ul className="space-y-1" data-testid="node-events">
              {events.data.events.map((e, i) => (
                <li key={i} className={e.type === 'Warning' ? 'text-amber-800' : ''}>
                  <span className="font-mono text-xs text-slate-500">{e.lastSeen}</span> <strong>{e.reason}</strong> ×
                  {e.count}: {e.message}
                </li>
              ))}
            </ul>
          ))}
        {tab === 'managers' && obj.data && (
          <table className="w-full text-xs" data-testid="field-managers">
            <thead>
              <tr className="text-left text-slate-500">
                <th>Field</th>
                <th>Manager</th>
                <th>Operation</th>
                <th>Time</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(obj.data.owners).flatMap(([path, owners]) =>
                owners.map((o, i) => (
                  <tr key={`${path}-${i}`} className="border-t border-slate-100">
                    <td className="break-all pr-2 font-mono">{path}</td>
                    <td className="pr-2">{o.manager}</td>
                    <td className="pr-2">
                      {o.operation}
                      {o.subresource ? ` (${o.subresource})` : ''}
                    </td>
                    <td>{o.time}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        )}
      </div>
    </aside>
  );
}
