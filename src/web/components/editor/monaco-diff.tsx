// Side-by-side YAML diff in monaco, loaded lazily (its own chunk). Each changed line on the live side
// carries a badge naming the field manager that wrote it; hovering shows operation, time, subresource.
// Only the editor API, the diff editor, hover (the owner badges), find, folding and the YAML tokenizer:
// `import 'monaco-editor'` would register every language service and ship the TypeScript, CSS, HTML and
// JSON workers (about 9 MB) that a YAML diff never starts.
import * as monaco from 'monaco-editor/editor/editor.api';
import 'monaco-editor/features/codicon/register';
import 'monaco-editor/features/diffEditor/register';
import 'monaco-editor/features/hover/register';
import 'monaco-editor/features/find/register';
import 'monaco-editor/features/folding/register';
import 'monaco-editor/languages/definitions/yaml/register';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import { useEffect, useRef } from 'react';
import { useResolvedTheme } from '../../lib/theme.ts';

(self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = { getWorker: () => new EditorWorker() };

// monaco's own themes with darker added/removed backgrounds: its token colours keep a 4.5:1 contrast on them
monaco.editor.defineTheme('console-light', {
  base: 'vs',
  inherit: true,
  rules: [{ token: 'type', foreground: '006767' }], // YAML keys: #008080 is 4.3:1 on the diff colours
  colors: {
    'diffEditor.insertedTextBackground': '#c9f2d0',
    'diffEditor.removedTextBackground': '#ffd7d5',
    'diffEditor.insertedLineBackground': '#e9f9ec',
    'diffEditor.removedLineBackground': '#fff0ef',
  },
});
monaco.editor.defineTheme('console-dark', {
  base: 'vs-dark',
  inherit: true,
  rules: [],
  colors: {
    'diffEditor.insertedTextBackground': '#1f3d1f',
    'diffEditor.removedTextBackground': '#4a0f0f',
    'diffEditor.insertedLineBackground': '#15291a',
    'diffEditor.removedLineBackground': '#2e1212',
  },
});

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
  const theme = useResolvedTheme();
  // monaco's theme is global; this effect runs before the editor below is created
  useEffect(() => {
    monaco.editor.setTheme(theme === 'dark' ? 'console-dark' : 'console-light');
  }, [theme]);
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
      // the textarea input (the EditContext one has no accessible name until focused)
      editContext: false,
    });
    // each side's input is named (originalAriaLabel / modifiedAriaLabel are not applied at creation)
    editor.getOriginalEditor().updateOptions({ ariaLabel: 'Git: server-side dry-run of the render (read-only YAML)' });
    editor.getModifiedEditor().updateOptions({ ariaLabel: 'Live object (read-only YAML)' });
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
