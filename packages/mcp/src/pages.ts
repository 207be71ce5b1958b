/** Most pages read of one list: a server that never stops paging is an error, not a hang. */
export const maxListPages = 1000;

/** One page of a list, and the cursor of the next (absent on the last page). */
export interface Page<T> {
  items: T[];
  nextCursor?: string | undefined;
}

/**
 * Reads every page of a paginated MCP list (`tools/list`, `prompts/list`, `resources/list`):
 * the SDK's own refresh reads only the first. A cursor seen before is an error (the server
 * would page forever).
 *
 * @throws Error when the server repeats a cursor or sends more than 1,000 pages; what
 *   `fetchPage` throws.
 */
export async function listAllPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxListPages; page += 1) {
    const result = await fetchPage(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
    if (seen.has(cursor)) {
      throw new Error(`the server sent the page cursor ${JSON.stringify(cursor)} twice`);
    }
    seen.add(cursor);
  }
  throw new Error(`the server sent more than ${maxListPages} pages`);
}
