import { useEffect } from 'react';

export const PRODUCT = 'GitOps console';

/** "digital-human-dev · dev · nonprod — GitOps console": each page says what it is in the tab and to screen readers. */
export function pageTitle(page: string | undefined): string {
  return page ? `${page} — ${PRODUCT}` : PRODUCT;
}

export function useDocumentTitle(page: string | undefined): void {
  useEffect(() => {
    document.title = pageTitle(page);
  }, [page]);
}
