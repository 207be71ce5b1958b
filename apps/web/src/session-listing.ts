// The server's session list between welcomes: `GET /api/sessions` (same origin, the token as a
// Bearer header), so the list shows the live state of sessions the page has not opened.
import { sessionListingSchema, type ServerEventOf } from '@claw/channel/protocol';
import type { UnreadableSessions } from './state/types.js';

export type ListedSessions = ServerEventOf<'welcome'>['sessions'];

/** What `GET /api/sessions` answers: the sessions, and the stored ones that cannot be read. */
export interface Listing {
  sessions: ListedSessions;
  unreadable: UnreadableSessions;
}

/** The listing, or undefined when it could not be had (the socket stays the source of truth). */
export async function fetchListing(
  token: string,
  fetcher: typeof fetch = fetch,
): Promise<Listing | undefined> {
  try {
    const response = await fetcher('/api/sessions', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      cache: 'no-store',
    });
    if (!response.ok) return undefined;
    const parsed = sessionListingSchema.safeParse(await response.json());
    if (!parsed.success) return undefined;
    return { sessions: parsed.data.sessions, unreadable: parsed.data.unreadable_sessions ?? [] };
  } catch {
    return undefined;
  }
}
