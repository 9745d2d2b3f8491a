// The details of one object: a modal dialog (the native <dialog>, so the rest of the page is inert).
// It takes focus, keeps Tab inside, closes on Escape or a click outside, and gives focus back to what
// opened it (the tree puts it on the row).
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { HealthBadge } from '../../../components/badges.tsx';
import { Time } from '../../../components/time.tsx';
import { eventsQueryOptions, objectQueryOptions } from '../api/tree-queries.ts';

const TABBABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, [tabindex]:not([tabindex="-1"])';
const TABS = ['yaml', 'events', 'managers'] as const;
const TAB_LABEL = { yaml: 'Live YAML', events: 'Events', managers: 'Field managers' };

export function NodeDrawer({ node, onClose }: { node: TreeNodeDto; onClose: () => void }) {
  const [tab, setTab] = useState<(typeof TABS)[number]>('yaml');
  const obj = useQuery(objectQueryOptions(node.ref));
  const events = useQuery({ ...eventsQueryOptions(node.ref), enabled: tab === 'events' });
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descId = useId();
  useEffect(() => {
    const d = dialog.current;
    // an HTML row or button, or an SVG graph node
    const a = document.activeElement;
    const opener = a instanceof HTMLElement || a instanceof SVGElement ? a : null;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
    d?.focus();
    return () => {
      if (opener?.isConnected) opener.focus({ preventScroll: true });
    };
  }, []);
  const onKeyDown = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
      return;
    }
    if (e.key !== 'Tab' || !dialog.current) return;
    // Tab cycles through the dialog's own controls
    const all = [...dialog.current.querySelectorAll<HTMLElement>(TABBABLE)].filter((el) => el.offsetParent !== null);
    const first = all[0];
    const last = all.at(-1);
    if (!first || !last) return;
    const at = document.activeElement;
    if (e.shiftKey && (at === first || at === dialog.current)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && at === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={dialog}
      aria-modal="true"
      aria-labelledby={titleId}
      aria-describedby={descId}
      tabIndex={-1}
      data-testid="node-drawer"
      onKeyDown={onKeyDown}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onClick={(e) => {
        // a click on the backdrop (outside the panel) closes
        if (e.target === e.currentTarget) onClose();
      }}
      className="fixed inset-y-0 right-0 left-auto m-0 flex h-full max-h-none w-[40rem] max-w-full flex-col border-l border-slate-200 bg-white p-0 text-slate-900 shadow-xl outline-none backdrop:bg-black/30"
    >
      <header className="flex items-center gap-2 border-b border-slate-200 p-3">
        <div className="min-w-0">
          <h2 id={titleId} className="font-semibold wrap-anywhere">
            {node.ref.kind} {node.ref.namespace ? `${node.ref.namespace}/` : ''}
            {node.ref.name}
          </h2>
          <div id={descId} className="text-xs text-slate-600 wrap-anywhere">
            {node.reason}
          </div>
        </div>
        <HealthBadge status={node.health} />
        <button type="button" className="ml-auto rounded px-2 text-lg" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="flex gap-1 border-b border-slate-200 px-3 text-sm" role="group" aria-label="Details">
        {TABS.map((t) => (
          <button
            type="button"
            key={t}
            aria-pressed={tab === t}
            className={`px-2 py-1 ${tab === t ? 'border-b-2 border-teal-600 font-medium' : 'text-slate-600'}`}
            onClick={() => setTab(t)}
          >
            {TAB_LABEL[t]}
          </button>
        ))}
      </div>
      <div className="flex-1 overflow-auto p-3 text-sm" tabIndex={0} role="region" aria-label={TAB_LABEL[tab]}>
        {tab === 'yaml' &&
          (obj.isPending ? (
            'Loading…'
          ) : obj.isError ? (
            <p className="text-red-700">{obj.error.message}</p>
          ) : (
            <pre className="font-mono text-xs whitespace-pre-wrap wrap-anywhere" data-testid="live-yaml">
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
                <li key={i} className={`wrap-anywhere ${e.type === 'Warning' ? 'text-amber-800' : ''}`}>
                  <span className="font-mono text-xs text-slate-600">
                    <Time iso={e.lastSeen} />
                  </span>{' '}
                  <strong>{e.reason}</strong> ×{e.count}: {e.message}
                </li>
              ))}
            </ul>
          ))}
        {tab === 'managers' && obj.data && (
          <table className="w-full text-xs" data-testid="field-managers">
            <thead>
              <tr className="text-left text-slate-600 [&>th]:pr-3 [&>th]:font-medium">
                <th scope="col">Field</th>
                <th scope="col">Manager</th>
                <th scope="col">Operation</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(obj.data.owners).flatMap(([path, owners]) =>
                owners.map((o, i) => (
                  <tr key={`${path}-${i}`} className="border-t border-slate-100">
                    <td className="pr-2 font-mono wrap-anywhere">{path}</td>
                    <td className="pr-2 wrap-anywhere">{o.manager}</td>
                    <td className="pr-2">
                      {o.operation}
                      {o.subresource ? ` (${o.subresource})` : ''}
                    </td>
                    <td className="whitespace-nowrap">
                      <Time iso={o.time} />
                    </td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        )}
      </div>
    </dialog>
  );
}
