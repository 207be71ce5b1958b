// The server token: from the URL fragment (`#token=…`, never sent to the server), then kept in
// sessionStorage so that a reload still has it while the address bar no longer shows it.

export const tokenKey = 'claw.console.token';

export interface TokenPlace {
  hash: string;
  pathname: string;
  search: string;
}

/** The fragment's token, if any (the fragment may hold other parameters too). */
export function tokenFromHash(hash: string): string | undefined {
  const token = new URLSearchParams(hash.replace(/^#/, '')).get('token');
  return token === null || token === '' ? undefined : token;
}

/**
 * Takes the token from the fragment into storage and removes it from the address (`replace`
 * is history.replaceState; other fragment parameters stay); without one in the fragment, the
 * stored one. Storage that refuses the write (private mode, quota) only costs the reload: the
 * token is still used now.
 */
export function takeToken(
  place: TokenPlace,
  storage: Pick<Storage, 'getItem' | 'setItem'>,
  replace: (url: string) => void,
): string | undefined {
  const fromHash = tokenFromHash(place.hash);
  if (fromHash !== undefined) {
    try {
      storage.setItem(tokenKey, fromHash);
    } catch {
      // Kept for this page only.
    }
    const rest = new URLSearchParams(place.hash.replace(/^#/, ''));
    rest.delete('token');
    const fragment = rest.toString();
    replace(`${place.pathname}${place.search}${fragment === '' ? '' : `#${fragment}`}`);
    return fromHash;
  }
  try {
    return storage.getItem(tokenKey) ?? undefined;
  } catch {
    return undefined;
  }
}
