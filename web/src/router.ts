// Hash routes (`#/projects/<id>/...`): the server serves one index.html at `/`, so any link
// can be reloaded or shared without a server-side fallback.
import { useEffect, useState } from 'preact/hooks';

export interface Route { path: string[]; query: URLSearchParams }

function current(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = hash.split('?');
  return { path: pathPart.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(queryPart) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** `#/a/b?k=v` from parts, each part encoded. */
export function href(parts: string[], query?: Record<string, string>): string {
  const q = query ? new URLSearchParams(query).toString() : '';
  return `#/${parts.map(encodeURIComponent).join('/')}${q ? `?${q}` : ''}`;
}

export function navigate(parts: string[], query?: Record<string, string>): void {
  location.hash = href(parts, query);
}
