// Small shared pieces: loading data, showing errors and times. Everything from the API is
// rendered as text (Preact escapes it); no markup is ever built from strings.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { HttpError } from './api.js';

export interface Loaded<T> { data: T | undefined; error: unknown; loading: boolean; reload: () => void }

/** Runs `load` when `key` changes (and on reload); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then((data) => { if (live) setState({ data, loading: false }); }, (error: unknown) => { if (live) setState({ error, loading: false }); });
    return () => { live = false; };
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Issue { path?: string; message?: string }

/** The server's message, plus manifest issues or conflicting files when the body has them. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const body = error instanceof HttpError ? error.body : {};
  const issues = Array.isArray(body.issues) ? (body.issues as Issue[]) : [];
  const conflicts = Array.isArray(body.conflicts) ? (body.conflicts as string[]) : [];
  return (
    <div class="error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {error instanceof Error ? error.message : String(error)}
      {typeof body.code === 'string' ? <span class="code"> ({body.code})</span> : null}
      {issues.length ? <IssueList issues={issues} /> : null}
      <ConflictList conflicts={conflicts} omitted={typeof body.conflicts_omitted === 'number' ? body.conflicts_omitted : undefined} />
    </div>
  );
}

/** The conflicting files a merge preview or a refused merge lists, and how many more it left out. */
export function ConflictList({ conflicts, omitted }: { conflicts: string[]; omitted: number | undefined }) {
  if (!conflicts.length) return null;
  return (
    <div>Conflicting files: <ul class="files">{conflicts.map((file) => <li key={file}><code>{file}</code></li>)}</ul>
      {omitted ? <p class="muted">and {omitted} more, not listed</p> : null}
    </div>
  );
}

export function IssueList({ issues }: { issues: Issue[] }) {
  return (
    <ul class="issues">
      {issues.map((issue, i) => <li key={i}>{issue.path ? <code>{issue.path}</code> : null}{issue.path ? ': ' : ''}{issue.message ?? ''}</li>)}
    </ul>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted" aria-live="polite">Loading {what}…</p>;
}

/** Shows a loaded value, its error, or a loading line. */
export function Show<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (loaded.data !== undefined) return <>{children(loaded.data)}</>;
  if (loaded.error) return <ErrorBox error={loaded.error} title={`Could not load ${what}`} />;
  return <Loading what={what} />;
}

const UNITS: [number, string][] = [[86_400, 'd'], [3_600, 'h'], [60, 'min'], [1, 's']];

/** "3 h ago" with the exact time in the tooltip; "—" for null. */
export function Age({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  const seconds = Math.round((Date.now() - Date.parse(at)) / 1000);
  const abs = Math.abs(seconds);
  const [size, unit] = UNITS.find(([s]) => abs >= s) ?? [1, 's'];
  const n = Math.floor(abs / size);
  return <time dateTime={at} title={new Date(at).toLocaleString()}>{seconds >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`}</time>;
}

export function Sha({ sha }: { sha: string | null | undefined }) {
  return sha ? <code title={sha}>{sha.slice(0, 8)}</code> : <span class="muted">—</span>;
}

export function Status({ value }: { value: string }) {
  return <span class={`status status-${value.replace(/[^a-z-]/g, '')}`}>{value}</span>;
}

/** A button that runs an async action once at a time and reports its error below. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try { await action(); } catch (e) { setError(e); } finally { setBusy(false); }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}
