// The page's URLs: all of its state is in the URL, so a link or a reload shows the same screen.
// Builders for each screen's URL, and the parse of one back into a screen and its params.

// The params that pick a stack; every screen that shows results carries them.
export const STACK_PARAMS = ['backend', 'compiler_version', 'library_version'];

/** `path` with the named params that have a value, in that order, as its query. */
export function urlWith(path, names, params) {
  const query = new URLSearchParams();
  for (const name of names) if (params[name]) query.set(name, params[name]);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

// The list's params, in URL order; the sort belongs to the Tested and Architectures views, and
// the Architectures view names its census stack by its stem.
export function listParamNames(params) {
  if (params.view === 'architectures') return ['view', 'task', 'q', 'sort', 'stack'];
  return ['view', 'task', 'q', ...(params.view === 'tested' ? ['sort'] : []), ...STACK_PARAMS];
}

export const listUrl = (params) => urlWith('/', [...listParamNames(params), 'page'], params);
export const compareUrl = (params) => urlWith('/compare', ['a', 'b', 'task'], params);
/** The Architectures view of census stack `stem` and `task`, searched for `type` if given. */
export const architecturesUrl = (stem, task, type) => urlWith('/', ['view', 'task', 'q', 'stack'], { view: 'architectures', task, q: type, stack: stem });
export const causesUrl = (params) => urlWith('/causes', ['task', ...STACK_PARAMS], params);

export function modelUrl(id, params) {
  const [org, name] = id.split('/');
  return urlWith(`/model/${encodeURIComponent(org)}/${encodeURIComponent(name)}`, ['task', ...STACK_PARAMS], params);
}

/** The params that pick `stack` (an API stack object). */
export function stackParams(stack) {
  return { backend: stack.backend, compiler_version: stack.compiler_version, library_version: stack.library_version };
}

/** {screen: 'list' | 'architectures' | 'model' | 'causes' | 'compare', params, id (the model
 * page's)} of `href`. */
export function screenOf(href) {
  const url = new URL(href);
  const params = Object.fromEntries(url.searchParams.entries());
  const match = url.pathname.match(/^\/model\/([^/]+)\/([^/]+)\/?$/);
  if (match) {
    return { screen: 'model', id: `${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`, params };
  }
  if (url.pathname === '/causes') return { screen: 'causes', params };
  if (url.pathname === '/compare') return { screen: 'compare', params };
  return { screen: params.view === 'architectures' ? 'architectures' : 'list', params };
}
