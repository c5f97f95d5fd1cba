// The Space's JSON API (/api/...), and what the page reads from /api/versions: the tasks with
// what each one's figures mean, the backends and their stacks. The page keeps no list of tasks
// of its own: a new task needs no edit here.
import { STACK_PARAMS, listParamNames, modelUrl, urlWith } from './urls.js';

/** GET `path` as JSON; a failed answer throws an Error with the API's message and `parameters`. */
export async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  if (!response.ok) {
    const error = new Error(body && body.error ? body.error : `${response.status} ${response.statusText}`);
    error.parameters = body && body.parameters ? body.parameters : [];
    throw error;
  }
  return body;
}

let cachedVersions = null;  // the promise of /api/versions, asked once per page load

/** /api/versions: asked by the first screen that needs it (a render that starts before the
 * answer came shares the same request), then kept. A failed request is asked again next time. */
export function loadVersions() {
  if (!cachedVersions) cachedVersions = getJson('/api/versions').catch((error) => { cachedVersions = null; throw error; });
  return cachedVersions;
}

/** The stacks of `backend` in `versions`, newest first; none for an unknown backend. */
export function stackOptions(versions, backend) {
  const entry = (versions.backends || []).find((item) => item.name === backend);
  return entry ? entry.stacks : [];
}

/** What `versions` says of `task` (library, generates_text, speed_meaning...), or null. */
export function taskDetails(versions, task) {
  return (versions.task_details || []).find((item) => item.name === task) || null;
}

/** One page of the list: the params of listUrl, `limit` models from `offset`. */
export function fetchModels(params, { offset, limit }) {
  const query = new URLSearchParams();
  for (const name of listParamNames(params)) if (params[name]) query.set(name, params[name]);
  query.set('offset', String(offset));
  query.set('limit', String(limit));
  return getJson(`/api/models?${query}`);
}

/** The model page's data for model `id` ('org/name') on the task and stack of `params`. */
export function fetchModel(id, params) {
  return getJson(`/api${modelUrl(id, params)}`);
}

/** The failures of the stack of `params`, grouped by cause. */
export function fetchCauses(params) {
  return getJson(urlWith('/api/causes', STACK_PARAMS, params));
}

/** The verdicts that changed from stack stem `a` to stem `b`, on `task` if given. */
export function fetchCompare(a, b, task) {
  const query = new URLSearchParams({ a: a || '', b: b || '' });
  if (task) query.set('task', task);
  return getJson(`/api/compare?${query}`);
}
