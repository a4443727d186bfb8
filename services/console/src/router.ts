import { useEffect, useState } from 'preact/hooks';

/**
 * Paths, not hashes, so each page has a URL to share; nginx answers every console path with
 * index.html (infra/nginx). Links call `navigate` instead of loading the page again.
 */
export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

/** A link's click handler that changes the page without reloading it; modified clicks still open a new tab. */
export function link(path: string) {
  return (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(path);
  };
}
