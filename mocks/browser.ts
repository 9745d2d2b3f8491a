import { setupWorker } from 'msw/browser';
import { handlers } from './handlers.ts';

export async function startDemoWorker(): Promise<void> {
  await setupWorker(...handlers).start({ onUnhandledRequest: 'bypass' });
}
