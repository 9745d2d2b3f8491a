import { applyThemeChoice, useThemeChoice, type ThemeChoice } from '../lib/theme.ts';

/** Light, dark or the system's setting. */
export function ThemeToggle() {
  const choice = useThemeChoice();
  return (
    <label className="flex items-center gap-1 text-xs">
      <span className="text-slate-600">Theme</span>
      <select
        data-testid="theme-toggle"
        className="rounded border border-slate-300 bg-white px-1 py-0.5"
        value={choice}
        onChange={(e) => applyThemeChoice(e.target.value as ThemeChoice)}
      >
        <option value="system">system</option>
        <option value="light">light</option>
        <option value="dark">dark</option>
      </select>
    </label>
  );
}
