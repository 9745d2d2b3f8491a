// @vitest-environment jsdom
// The app list's light validation (envelope + first app by the schema, the rest by their essentials).
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appsFixture, handlers } from '../../../../../mocks/handlers.ts';
import { AppsResponse } from '../../../../api/schemas.ts';
import { getApps } from './apps-queries.ts';

const server = setupServer(...handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const answer = (body: Record<string, unknown>) => server.use(http.get('/api/apps', () => HttpResponse.json(body)));

describe('getApps', () => {
  it('returns the list as sent', async () => {
    // what the full schema parse gave (unknown envelope keys dropped, every app as sent)
    expect(await getApps()).toEqual(AppsResponse.parse(appsFixture));
  });
  it('refuses a list whose later app lacks an essential field, or whose first app breaks the schema', async () => {
    const [first, ...rest] = appsFixture.apps;
    const { health: _h, ...noHealth } = rest[0] ?? first!;
    answer({ ...appsFixture, apps: [first, noHealth] });
    await expect(getApps()).rejects.toThrow(/malformed app/);
    answer({ ...appsFixture, apps: [{ ...first, inventoryCount: 'many' }, ...rest] });
    await expect(getApps()).rejects.toThrow();
    answer({ ...appsFixture, total: 'all' });
    await expect(getApps()).rejects.toThrow();
  });
});
