// The event sinks capability's public face (issue 28): configuration, delivery and its store. Its routes are
// registered by app.ts directly.
export { loadSinks, type SinkConfig } from './config.ts';
export { SinkDelivery, type NotificationRenderer, type SinkStatus } from './delivery.ts';
export { SinkStore } from './sink-store.ts';

import type { SinkDelivery } from './delivery.ts';
import type { SinkStore } from './sink-store.ts';

/** What the routes and /metrics are given: the delivery (running only where this replica delivers) and its store. */
export interface SinksDeps {
  delivery: SinkDelivery;
  sinkStore: SinkStore;
  /** whether this replica delivers now (holds the recorder Lease, or is the only replica) */
  delivering(): boolean;
}
