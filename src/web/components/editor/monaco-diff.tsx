// Side-by-side YAML diff in monaco, loaded lazily (its own chunk). Each changed line on the live side
// carries a badge naming the field manager that wrote it; hovering shows operation, time, subresource.
import * as monaco from 'monaco-editor';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import { useEffect, useRef } from 'react';

(self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = { getWorker: () => new EditorWorker() };

export interface LineBadge {
  line: number;
  label: string;
  hover: string;
  tone: 'drift' | 'pending' | 'conflict' | 'other';
}

export default function MonacoDiff({
  original,
  modified,
  badges,
}: {
  original: string;
  modified: string;
  badges: LineBadge[];
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    const editor = monaco.editor.createDiffEditor(host.current, {
      readOnly: true,
      originalEditable: false,
      renderSideBySide: true,
      automaticLayout: true,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      fontSize: 12,
    });
    const o = monaco.editor.createModel(original, 'yaml');
    const m = monaco.editor.createModel(modified, 'yaml');
    editor.setModel({ original: o, modified: m });
    const deco = editor.getModifiedEditor().createDecorationsCollection(
      badges.map((b) => ({
        range: new monaco.Range(b.line, 1, b.line, m.getLineMaxColumn(Math.min(b.line, m.getLineCount()))),
        options: {
          isWholeLine: true,
          className: `owner-line owner-line-${b.tone}`,
          after: {
            content: `⟵ ${b.label}`,
            inlineClassName: `owner-badge owner-badge-${b.tone}`,
            cursorStops: monaco.editor.InjectedTextCursorStops.None,
          },
          hoverMessage: { value: b.hover },
        },
      })),
    );
    return () => {
      deco.clear();
      editor.dispose();
      o.dispose();
      m.dispose();
    };
  }, [original, modified, badges]);
  return <div ref={host} className="h-96 w-full border border-slate-200" data-testid="monaco-diff" />;
}
