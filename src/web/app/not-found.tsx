import { Link, useLocation } from 'react-router';
import { useDocumentTitle } from '../lib/document-title.ts';

/** Unknown routes: inside the normal layout, with the way back. */
export function NotFound() {
  const { pathname } = useLocation();
  useDocumentTitle('Page not found');
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-6" data-testid="not-found">
      <h1 className="mb-2 text-xl font-semibold">Page not found</h1>
      <p className="mb-3 text-sm text-slate-600">
        There is no page at <code className="font-mono">{pathname}</code>.
      </p>
      <Link to="/" className="text-teal-700 underline">
        Back to all apps
      </Link>
    </div>
  );
}
