// The server's session list between welcomes: `GET /api/sessions` (same origin, the token as a
// Bearer header), so the list shows the live state of sessions the page has not opened.
import type { ServerEventOf } from '@claw/channel/protocol';
import { z } from 'zod';

export type ListedSessions = ServerEventOf<'welcome'>['sessions'];

const listingSchema = z.object({
  sessions: z.array(
    z.object({
      session_id: z.string().min(1),
      state: z.enum(['idle', 'running', 'awaiting_approval']),
      last_seq: z.number().int().nonnegative(),
      updated_at: z.string(),
    }),
  ),
});

/** The listing, or undefined when it could not be had (the socket stays the source of truth). */
export async function fetchListing(
  token: string,
  fetcher: typeof fetch = fetch,
): Promise<ListedSessions | undefined> {
  try {
    const response = await fetcher('/api/sessions', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      cache: 'no-store',
    });
    if (!response.ok) return undefined;
    const parsed = listingSchema.safeParse(await response.json());
    return parsed.success ? parsed.data.sessions : undefined;
  } catch {
    return undefined;
  }
}
